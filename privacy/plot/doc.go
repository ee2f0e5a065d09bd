// Package plot draws the analytic model of package model as SVG or PNG.
//
// Save draws the model along a swept parameter: P_h(1) in an upper panel
// and P_h(N) in a lower one, one curve per number of intersected filters,
// with marks such as a demonstration's own wallet. SaveJ draws P_h(j)
// against the number j of the wallet's addresses the attacker names (the
// curves of Gervais et al.'s figures): the papers' formula at the expected
// false positives above, its average over their binomial number below, one
// curve per number of filters or per swept value. Both put a legend under
// the panels on an opaque background.
//
// It is the only package of spvfilter that imports gonum's plotting
// library, so that the analysis and its distributed workers do not link
// it.
package plot
