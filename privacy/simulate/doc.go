// Package simulate writes labelled ground truth for the attacks of
// package attack, and scores their reports against it.
package simulate
