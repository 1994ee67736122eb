// Command vaultask-dev is the development helper that plays the part of
// Obsidian's LiveSync: it writes notes into a CouchDB database the way the
// plugin does, and runs the demo. It is not part of the vaultask binary,
// which never writes to CouchDB.
//
//	vaultask-dev put [-db URL] [-notes-first] PATH [FILE]   write a note (FILE, or stdin)
//	vaultask-dev delete [-db URL] PATH                      soft-delete a note
//	vaultask-dev load [-db URL] [-metadata-only PATH]... DIR   set up a vault and load a folder into it
//	vaultask-dev demo [flags]                               the demo (see scripts/demo.sh)
package main
