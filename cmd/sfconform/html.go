package main

import "errors"

// writeHTML writes the HTML report of a summary into dir.
func writeHTML(dir string, s *summary) (string, error) {
	return "", errors.New("the HTML report is not written yet")
}
