package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vaultask/vaultask/tstest/livesyncput"
)

// defaultDB is the demo's database, where put and delete write unless told.
const defaultDB = "http://admin:s3cret@127.0.0.1:15984/demo"

const usage = `usage:
  vaultask-dev put [-db URL] [-notes-first] PATH [FILE]   write a note in LiveSync format (text from FILE or stdin)
  vaultask-dev delete [-db URL] PATH                      soft-delete a note, as LiveSync does
  vaultask-dev load [-db URL] [-metadata-only PATH]... DIR   create a LiveSync vault database and load a folder into it
  vaultask-dev demo [-h]                                  run the demo: a test CouchDB, the demo vault, vaultask serve

-db is a CouchDB database URL with credentials, default $VAULTASK_DEV_DB or ` + defaultDB + `
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "vaultask-dev:", err)
		os.Exit(1)
	}
}

// errUsage is a mistake in the command line; usage follows it.
var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: name a command", errUsage)
	}
	var err error
	switch args[0] {
	case "put":
		err = put(ctx, args[1:], stdin, stdout)
	case "delete":
		err = del(ctx, args[1:], stdout)
	case "load":
		err = load(ctx, args[1:], stdout)
	case "demo":
		err = demo(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// dbFlag adds -db to fs.
func dbFlag(fs *flag.FlagSet) *string {
	def := os.Getenv("VAULTASK_DEV_DB")
	if def == "" {
		def = defaultDB
	}
	return fs.String("db", def, "CouchDB database URL, with user:password")
}

// client makes a client of a database URL whose credentials are in it.
func client(raw string) (*livesyncput.Client, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") == "" {
		return nil, fmt.Errorf("-db %q: want a database URL such as %s", raw, defaultDB)
	}
	c := &livesyncput.Client{}
	if u.User != nil {
		c.User = u.User.Username()
		c.Password, _ = u.User.Password()
		u.User = nil
	}
	c.DB = u.String()
	return c, nil
}

// vaultPath checks a vault-relative path as LiveSync stores it.
func vaultPath(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("the note's path is empty")
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.Contains(p, ":"):
		return "", fmt.Errorf("%q: a vault path is relative, with / between folders and no ':' (e.g. Inbox/From my phone.md)", p)
	case p == "." || p == ".." || strings.HasPrefix(p, "../"):
		return "", fmt.Errorf("%q leaves the vault: a vault path names a note inside it (e.g. Inbox/From my phone.md)", p)
	case path.Clean(p) != p:
		return "", fmt.Errorf("%q is not a clean vault path; did you mean %q?", p, strings.TrimPrefix(path.Clean("/"+p), "/"))
	}
	return p, nil
}

func put(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("put", flag.ContinueOnError)
	db := dbFlag(fs)
	notesFirst := fs.Bool("notes-first", false, "write the metadata before the chunks, as a replication sometimes delivers them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return fmt.Errorf("%w: put PATH [FILE]", errUsage)
	}
	p, err := vaultPath(fs.Arg(0))
	if err != nil {
		return err
	}
	c, err := client(*db)
	if err != nil {
		return err
	}
	var text []byte
	if file := fs.Arg(1); file != "" && file != "-" {
		text, err = os.ReadFile(file)
	} else {
		text, err = io.ReadAll(stdin)
	}
	if err != nil {
		return fmt.Errorf("read the note's text: %w", err)
	}
	if err := c.Put(ctx, p, string(text), *notesFirst); err != nil {
		return fmt.Errorf("put %s: %w", p, err)
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes) to %s\n", p, len(text), c.DB)
	return nil
}

func del(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("delete", flag.ContinueOnError)
	db := dbFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: delete PATH", errUsage)
	}
	p, err := vaultPath(fs.Arg(0))
	if err != nil {
		return err
	}
	c, err := client(*db)
	if err != nil {
		return err
	}
	if err := c.Delete(ctx, p); err != nil {
		return fmt.Errorf("delete %s: %w", p, err)
	}
	fmt.Fprintf(stdout, "deleted %s in %s\n", p, c.DB)
	return nil
}

// listFlag is a flag given any number of times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func load(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	db := dbFlag(fs)
	var metadataOnly listFlag
	fs.Var(&metadataOnly, "metadata-only", "vault path of a note to write without its chunks, as an interrupted sync leaves it (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: load DIR", errUsage)
	}
	c, err := client(*db)
	if err != nil {
		return err
	}
	n, err := loadVault(ctx, c, fs.Arg(0), metadataOnly)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "loaded %d files from %s into %s\n", n, fs.Arg(0), c.DB)
	return nil
}

// loadVault creates the vault database and writes every file under dir
// but hidden ones (.obsidian, .trash), with its modification time; the
// notes named in metadataOnly get their metadata and no chunks.
func loadVault(ctx context.Context, c *livesyncput.Client, dir string, metadataOnly []string) (int, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return 0, fmt.Errorf("load: %s is not a folder", dir)
	}
	if err := c.CreateVault(ctx); err != nil {
		return 0, fmt.Errorf("load into %s: %w", c.DB, err)
	}
	partial := map[string]bool{}
	for _, p := range metadataOnly {
		partial[p] = true
	}
	n := 0
	err := filepath.WalkDir(dir, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && file != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, file)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if partial[rel] {
			delete(partial, rel)
			err = c.PutMetadata(ctx, rel, string(data))
		} else {
			err = c.PutFile(ctx, rel, data, info.ModTime().Truncate(time.Millisecond))
		}
		if err != nil {
			return fmt.Errorf("load %s: %w", rel, err)
		}
		n++
		return nil
	})
	if err != nil {
		return n, err
	}
	for p := range partial {
		return n, fmt.Errorf("load: -metadata-only %q: no such file under %s", p, dir)
	}
	return n, nil
}
