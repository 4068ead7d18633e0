// Package strictjson reads a JSON file into a value, refusing fields the
// value does not have, with errors that name the file and the byte offset:
// what a campaign's shard files (packages, pipelines) need when a merge
// reads them.
package strictjson
