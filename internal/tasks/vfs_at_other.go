//go:build !linux

package tasks

import "os"

// Hosts other than Linux have no O_PATH anchors: relative names are
// joined lexically to the cwd or the descriptor's path (see guestPath).

// hostAnchors: no O_PATH anchors here.
const hostAnchors = false

func anchorVFS(fsys vfs, dir *os.File, gdir string) (vfs, bool) { return nil, false }

func pairVFS(ofs, nfs vfs) (vfs, bool) { return nil, false }

func anchorPath(fsys vfs, d *os.File) (string, error) { return "", errNoAnchors }

func inoAt(dir *os.File, name string, follow bool) (uint64, bool) { return 0, false }

func unconfinedAt(fsys vfs, op func(dfd int) Errno) (Errno, bool) { return 0, false }

func anchorInRoot(fsys vfs, dir *os.File) bool { return true }

func openedPaths(fsys vfs, f *os.File) (host, guest string, ok bool) { return "", "", false }
