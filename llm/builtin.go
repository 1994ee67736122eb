package llm

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaultask/vaultask/llm/bge"
	"github.com/vaultask/vaultask/llm/builtin"
	"github.com/vaultask/vaultask/llm/e5"
	"github.com/vaultask/vaultask/llm/uselite"
)

// builtinModels are the built-in embedding models, a line each: a model is
// its package's Spec and its line here, which everything else reads (what
// is known of the model by name, the loader, the fetch).
var builtinModels = []*builtin.Spec{
	&e5.Spec,
	&bge.Spec,
	&uselite.Spec,
}

// BuiltinModels are the built-in embedding models, for the callers that
// go through each (the distances and coverage fits of every space an index
// may be in, the fetch); they must not be modified.
func BuiltinModels() []*builtin.Spec { return slices.Clone(builtinModels) }

// builtinSpec is the built-in model with id, nil for an id that is none.
func builtinSpec(id string) *builtin.Spec {
	if i := slices.IndexFunc(builtinModels, func(s *builtin.Spec) bool { return s.ID == id }); i >= 0 {
		return builtinModels[i]
	}
	return nil
}

// errNotBuiltin is the error of a builtin/ id that names no built-in
// model.
func errNotBuiltin(id string) error {
	ids := make([]string, len(builtinModels))
	for i, s := range builtinModels {
		ids[i] = s.ID
	}
	return fmt.Errorf("%w %q: the built-in embedding models are %s", ErrBadModelID, id, strings.Join(ids, ", "))
}

// DefaultBuiltinDir is where the built-in models are when the
// configuration names no directory (models.builtin_dir), and where the
// fetch puts them then: ${XDG_CACHE_HOME:-~/.cache}/vaultask.
func DefaultBuiltinDir() string { return builtin.DefaultDir() }

// loadBuiltin loads the built-in model with id from its folder of dir
// (DefaultBuiltinDir when "").
func loadBuiltin(id, dir string, workers int) (builtin.Model, error) {
	s := builtinSpec(id)
	if s == nil {
		return nil, errNotBuiltin(id)
	}
	if dir == "" {
		dir = DefaultBuiltinDir()
	}
	return s.Load(s.In(dir), builtin.Options{Workers: workers})
}

// FetchBuiltin installs the files of the built-in models named (by their
// short names, builtin.Spec.Name; every one when none is) into their
// folders of builtinDir (DefaultBuiltinDir when ""), from their
// registries, each file checked against the sum its package pins
// (builtin.Spec.Fetch), and writes a line for each model to log. A name it
// does not know is an error wrapping ErrBadModelID, before anything is
// fetched.
func FetchBuiltin(ctx context.Context, names []string, builtinDir string, log io.Writer) error {
	specs := builtinModels
	if len(names) > 0 {
		specs = nil
		for _, n := range names {
			i := slices.IndexFunc(builtinModels, func(s *builtin.Spec) bool { return s.Name == n })
			if i < 0 {
				known := make([]string, len(builtinModels))
				for j, s := range builtinModels {
					known[j] = s.Name
				}
				return fmt.Errorf("%w %q: the built-in models are %s", ErrBadModelID, n, strings.Join(known, ", "))
			}
			specs = append(specs, builtinModels[i])
		}
	}
	if builtinDir == "" {
		builtinDir = DefaultBuiltinDir()
	}
	for _, s := range specs {
		dir := filepath.Join(builtinDir, s.Dir)
		downloaded, err := s.Fetch(ctx, builtinDir)
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", s.Name, err)
		case downloaded:
			fmt.Fprintf(log, "%s: installed %s's files into %s\n", s.Name, s.Sums.Archive().Name, dir)
		default:
			fmt.Fprintf(log, "%s: %s holds its files already\n", s.Name, dir)
		}
	}
	return nil
}
