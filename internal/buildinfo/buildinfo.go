package buildinfo

import "runtime/debug"

// Version is sfconform's module version and the first 12 digits of its
// VCS revision, "(unknown)" when the binary carries no build information.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}
