// Package privacybeam runs spvfilter's batch analysis of captured BIP 37
// filters ("spvfilter privacy analyze --capture") as an Apache Beam
// pipeline, sharded over universe files × groups of sessions, so that a
// whole-chain universe against thousands of sessions can be spread over
// the workers of Flink, Spark or Dataflow.
//
// Every shard reads one universe file for one group of sessions into an
// attack.Accumulator and sends its counts on as JSON (the accumulator's
// MarshalJSON); the shards of a group are merged in the order of the files
// (attack.Accumulator.Merge), and the groups joined into one accumulator
// of every session (attack.Join). That one accumulator, the one the
// command-line tool fills in one pass, finishes every report, the links
// of --link and the intersections of --intersect and of each linked
// group, so the pipeline gives what one pass over all the files,
// concatenated in the order of their names, gives: the same JSON as
// "spvfilter privacy analyze --capture FILE --universe FILE --json", with
// --client, --intersect and --link as asked (Config).
//
// It lives in its own Go module so that the Beam SDK's dependencies stay out
// of spvfilter's.
package privacybeam
