package banlist

import (
	"fmt"
	"testing"
)

func TestHostKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"192.0.2.7:8333", "192.0.2.7"},
		{"192.0.2.7:18444", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:8333", "192.0.2.7"},
		{"[2001:DB8::1]:8333", "2001:db8::1"},
		{"Node.Example.:8333", "node.example"},
		{"127.0.0.1:18444", "127.0.0.1:18444"},
		{"[::1]:18444", "[::1]:18444"},
		{"127.0.0.1", "127.0.0.1"},
		{"not a host:1", "not a host:1"},
	}
	for _, tt := range tests {
		if got := HostKey(tt.in); got != tt.want {
			t.Errorf("HostKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func ExampleHostKey() {
	fmt.Println(HostKey("192.0.2.7:8333") == HostKey("192.0.2.7:8334"))
	fmt.Println(HostKey("127.0.0.1:18444") == HostKey("127.0.0.1:18445"))
	// Output:
	// true
	// false
}
