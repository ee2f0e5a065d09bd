// Package plot draws the analytic model of package model along a swept
// parameter, as SVG or PNG: P_h(1) in an upper panel and P_h(N) in a lower
// one, one curve per number of intersected filters, with marks such as a
// demonstration's own wallet, and a legend under both on an opaque
// background.
//
// It is the only package of spvfilter that imports gonum's plotting
// library, so that the analysis and its distributed workers do not link
// it.
package plot
