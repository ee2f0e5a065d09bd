// Package attack runs the attacks a node can make on what light clients
// send it: the BIP 37 filter attack against a universe of candidates
// (Analyze, AnalyzeGroups), the linking of captured sessions that share a
// wallet (LinkSessions, IntersectReports), and the block-download attack
// on a BIP 157 client against an appearance index (AnalyzeFetches).
package attack
