package main

import "testing"

// TestCaptureHelpNamesBothReaders: capture's help, its line in privacy's
// help and its summary say that it records the block requests of BIP 157
// clients too, for privacy fetches, and what the node must serve for
// them; before, they spoke of BIP 37 filters alone, so a newcomer with a
// BIP 157 client did not know where its capture came from.
func TestCaptureHelpNamesBothReaders(t *testing.T) {
	runRows(t, []contractRow{
		{name: "capture help", args: []string{"privacy", "capture", "--help"}, status: exitOK,
			stdout: []string{"getcfilters", "(getdata)", "\"privacy fetches\n--capture\" reads", "peerblockfilters=1", "spvfilter privacy fetches --capture capture.jsonl --index universe.idx"}},
		{name: "privacy help", args: []string{"privacy", "--help"}, status: exitOK,
			stdout: []string{"capture   a relay that records the filters and block requests of light clients",
				"record the filters they send and the blocks they ask for"}},
	})
}
