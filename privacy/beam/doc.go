// Package privacybeam runs spvfilter's batch analysis of captured BIP 37
// filters ("spvfilter privacy analyze --capture") as an Apache Beam
// pipeline, sharded over universe files × groups of sessions, so that a
// whole-chain universe against thousands of sessions can be spread over
// the workers of Flink, Spark or Dataflow.
//
// Every shard is one call of attack.AnalyzeGroups on one universe file for
// one group of sessions; the shards of a group are then merged into the
// reports that one AnalyzeGroups pass over all the files, concatenated in
// the order of their names, gives: the same counts, the same expected false
// positives to the last bit (the per-class rates come from privacy itself),
// the same matches with their lines numbered across the files, and the same
// JSON as "spvfilter privacy analyze --capture FILE --universe FILE --json".
//
// It lives in its own Go module so that the Beam SDK's dependencies stay out
// of spvfilter's.
package privacybeam
