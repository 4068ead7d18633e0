package main

import (
	"fmt"
	"strconv"
)

// seedFlag is --seed in every subcommand: an integer in any base Go
// reads (42, 0x2a), with a default each command chooses.
type seedFlag struct {
	v   int64
	set bool
}

func (s *seedFlag) String() string {
	if s == nil || !s.set {
		return ""
	}
	return strconv.FormatInt(s.v, 10)
}

func (s *seedFlag) Set(v string) error {
	n, err := strconv.ParseInt(v, 0, 64)
	if err != nil {
		return fmt.Errorf("%q is not an integer", v)
	}
	s.v, s.set = n, true
	return nil
}

// or is the seed given, or def.
func (s *seedFlag) or(def int64) int64 {
	if s.set {
		return s.v
	}
	return def
}
