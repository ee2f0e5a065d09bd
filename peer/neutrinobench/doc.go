// Package neutrinobench measures spvfilter's BIP 157 client against
// lightninglabs/neutrino v0.16.0 on the same btcd node and chain. It is a
// module of its own, so that neutrino and its dependencies stay out of
// spvfilter's go.mod.
//
// CachedChain generates a regtest chain (blocks built here and submitted
// to a real btcd, with a set number of distinct scripts in every block's
// filter and payments to known watched scripts in known blocks) once and
// keeps btcd's data directory in the user cache directory; StartNodes
// serves it from one or more btcd nodes. The benchmarks run both clients
// over the whole chain:
//
//	go test -run '^$' -bench Scan -count 3
//	SPVFILTER_BENCH_BLOCKS=20000 go test -run '^$' -bench Scan -count 3 -timeout 60m
package neutrinobench
