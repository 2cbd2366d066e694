//go:build !unix

package main

// syncDisk does nothing where there is no sync(2).
func syncDisk() {}
