// Package outfile is where sfconform's commands put what they write: each
// file is written whole or not at all (a temporary file in the same
// directory, synced and renamed), and every output place a command was
// given is checked before its run starts, so that a long run does not end
// with nowhere to put its results (docs/reproducer-format.md, "Nothing
// lost").
package outfile
