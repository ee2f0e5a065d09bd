// Package neutrinobench measures spvfilter's BIP 157 client against
// lightninglabs/neutrino v0.16.0 on the same btcd node and chain. It is a
// module of its own, so that neutrino and its dependencies stay out of
// spvfilter's go.mod.
//
// CachedChain generates a regtest chain once (blocks built here, with a set
// number of distinct scripts in every block's filter and payments to known
// watched scripts in known blocks) and keeps its blocks in the user cache
// directory; StartNodes replays them into a real btcd and serves the chain
// from one or more nodes. The benchmarks scan the whole chain with
// spvfilter, with neutrino's GetCFilter and GetBlock, and with neutrino's
// Rescan, and check that each finds exactly the planted transactions.
// They treat the clients alike: each process measures them in an order
// of its own, shuffled and printed, and each client's first scan in the
// process is a warm-up, neither timed nor counted, all of them before the
// first measured scan, so that no client alone pays for the process's
// heap growing from nothing:
//
//	go test -run '^$' -bench Scan -count 3
//	SPVFILTER_BENCH_BLOCKS=20000 go test -run '^$' -bench Scan -benchtime 1x -count 3 -timeout 60m
//	SPVFILTER_BENCH_BLOCKS=20000 SPVFILTER_BENCH_ROUNDS=5 go test -run TestCompare -v -timeout 60m
//
// TestCompare alternates the clients' order from round to round and
// prints each round's wall times, ratios and load average, then the
// medians with the spread of the rounds' ratios, and the bytes each
// client read by message; SPVFILTER_BENCH_CLIENTS (a regular expression
// over the clients' names) and SPVFILTER_BENCH_WATCH (counts of watched
// scripts, "1,100" by default) narrow it:
//
//	SPVFILTER_BENCH_BLOCKS=20000 SPVFILTER_BENCH_PEERS=3 SPVFILTER_BENCH_ROUNDS=9 SPVFILTER_BENCH_WATCH=1 \
//		SPVFILTER_BENCH_CLIENTS='^(spvfilter|neutrino)$' go test -run TestCompare -v -timeout 60m
//
// SPVFILTER_BENCH_PEERS sets the number of nodes serving the chain;
// SPVFILTER_BENCH_PROFILE names a directory that receives a CPU profile
// of each measured scan (client-N.pprof, the scan alone), and
// SPVFILTER_BENCH_NODE_PROFILE one that receives each node's CPU profile
// (node-N.pprof, its whole life, written when it stops), in which the
// serving of each request shows under btcd's handler of its message:
//
//	SPVFILTER_BENCH_NODE_PROFILE=DIR SPVFILTER_BENCH_BLOCKS=20000 SPVFILTER_BENCH_ROUNDS=5 SPVFILTER_BENCH_WATCH=1 \
//		SPVFILTER_BENCH_CLIENTS='^spvfilter$' go test -run TestCompare -v -timeout 60m
//	go tool pprof -peek 'inHandler$|outHandler$' BTCD DIR/node-0.pprof
//
// SPVFILTER_BENCH_NODES names nodes already serving the chain, which
// TestServe starts and keeps for SPVFILTER_BENCH_SERVE, so that two
// builds are compared against the same node without replaying the chain
// for each:
//
//	SPVFILTER_BENCH_BLOCKS=20000 SPVFILTER_BENCH_SERVE=1h go test -run TestServe -v -timeout 2h
//	SPVFILTER_BENCH_BLOCKS=20000 SPVFILTER_BENCH_NODES=127.0.0.1:PORT go test -run '^$' -bench 'Scan/W1$' -benchtime 1x -count 2
//
// TestFilterGaps measures what a connection carrying one request at a
// time costs the scan: it reads every filter from the first node raw (a
// bare handshake, answers counted and skipped) with every getcfilters
// written at once, in spvfilter's request model, with a second request
// in flight and one getcfilters at a time, and times spvfilter's scan
// with its connections traced, the client's and the node's turnarounds
// between requests apart; SPVFILTER_BENCH_GAPS sets its rounds and
// SPVFILTER_BENCH_GAPS_WAYS (a regular expression) picks the ways:
//
//	SPVFILTER_BENCH_BLOCKS=20000 SPVFILTER_BENCH_NODES=127.0.0.1:PORT SPVFILTER_BENCH_GAPS=9 go test -run TestFilterGaps -v
//
// Its traced scan also prints when each run of exchanges (headers,
// filter headers, filters, blocks) began and ended, counted from the
// scan's start, and the node's CPU time in each (medians by exchange at
// the end); its neutrino way scans with neutrino against the same node,
// and the medians close with neutrino's wall time over the pipelined
// raw read of the same round: the ceiling on the ratio, which no client
// can pass, whatever it does between the node's filters.
//
// TestSplitServe reads every filter raw from one node over one, two and
// three connections at once, each a contiguous part of the chain, to
// tell whether the node serves several connections faster than one;
// SPVFILTER_BENCH_SPLIT sets its rounds:
//
//	SPVFILTER_BENCH_BLOCKS=20000 SPVFILTER_BENCH_NODES=127.0.0.1:PORT SPVFILTER_BENCH_SPLIT=9 go test -run TestSplitServe -v
//
// TestCompare also measures, when SPVFILTER_BENCH_CLIENTS names them,
// spvfilter-2conns and spvfilter-3conns: spvfilter's client given two or
// three names for each node, which its dialer maps back, so that it
// spreads the filters over as many connections to one node (a prototype;
// the client itself opens one connection a node):
//
//	SPVFILTER_BENCH_BLOCKS=20000 SPVFILTER_BENCH_NODES=127.0.0.1:PORT SPVFILTER_BENCH_ROUNDS=8 SPVFILTER_BENCH_WATCH=1 \
//		SPVFILTER_BENCH_CLIENTS='^(spvfilter|spvfilter-3conns|neutrino)$' go test -run TestCompare -v
//
// The follow benchmark runs the two as a wallet leaves them running:
// spvfilter's client as a service (Client.Start) with a following rescan,
// and neutrino's ChainService with a Rescan that has no end block, each
// in a process of its own, connected to the same nodes (8 by default).
// Blocks as full as the generated ones are mined on one node in batches
// (2,000, ten a second), some paying watched scripts and some spending
// those payments; each follower must report every block, in order, and
// exactly those transactions. It reports, for each, the CPU time, the
// peak resident set size, the bytes the nodes sent it (their
// getpeerinfo) and those it counted itself, by message command too (per
// block mined, beside the other's, over the rounds and in each), the wall time and each block's delay
// from its mining to its report, over rounds that start the two in turns:
//
//	SPVFILTER_LONG=1 go test -run TestFollowBenchmark -v -timeout 120m
package neutrinobench
