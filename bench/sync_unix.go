//go:build unix

package main

import "syscall"

// syncDisk writes what the kernel holds dirty to disk.
func syncDisk() { syscall.Sync() }
