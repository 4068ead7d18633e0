// Package buildinfo names the sfconform build that is running: its module
// version and VCS revision, as the Go toolchain recorded them. The
// built-in plug-ins (the builtin producers and consumer) report it as
// their exact version; reproducers record it (docs/reproducer-format.md,
// producer_version and consumer_version).
package buildinfo
