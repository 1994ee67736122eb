package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vaultask/vaultask/internal/modelfetch"
	"github.com/vaultask/vaultask/internal/modelfile"
)

// Spec is a built-in embedding model as vaultask knows it: all of it but
// its code, in one value its package exports, which llm lists and the
// fetch reads.
type Spec struct {
	// Name is the model's short name, as `vaultask fetch-model` takes it.
	Name string
	// ID names the model where a model id is configured (builtin/…). Its
	// family (the part after the slash) is also how vaultask knows the
	// model served under another provider: its prefixes, size, distances
	// and coverage fit.
	ID string
	// Dir is the model's folder in the directory of the built-in models:
	// the model's name and the version of the release its files come from.
	Dir string
	// Source is the archive its files come in, and where in it they are.
	Source modelfetch.Source
	// Sums pin the archive and every file the fetch installs from it (the
	// package's checksums.txt, embedded), checked by the fetch and by
	// every load.
	Sums modelfile.Sums
	// Files are the installed files the model reads, the first the one
	// whose presence tells a folder holds the model; their pinned sums
	// name the model's vectors (Digest).
	Files []string
	// Prefixes are what the model wants put before a question and before
	// a passage.
	Prefixes Prefixes
	// Dim is the length of its vectors.
	Dim int
	// Distances are the distances retrieval judges its hits by.
	Distances Distances
	// Coverage names its coverage fit in llm/coverage/ (llm's
	// EmbeddingCoverage).
	Coverage string
	// Open loads the model from dir, its folder; it is handed its own
	// spec, for the errors it returns (LoadError). Load calls it; a
	// package's load makes it with Opener.
	Open func(s *Spec, dir string, opts Options) (Model, error)
}

// Prefixes are what an embedding model wants put before a text it embeds:
// one for a question (Query), one for a passage to be found (Document).
// Retrieval models are trained with them, and without them they quietly
// lose part of what they can find.
type Prefixes struct {
	Query, Document string
}

// Distances are the cosine distances that retrieval judges an embedding
// model's hits by. Each model spreads its distances on a scale of its own:
// the third nearest passage of a question the help vault answers lies 0.07
// to 0.16 from it with multilingual-e5-small (trained at temperature 0.01),
// 0.07 to 0.63 with USE-lite. So they are measured per model, on the help,
// hub and demo question sets (reports/RETRIEVAL.md): ConfidentGap with
// `vaultask eval retrieval --ab`, Thin with `vaultask eval web-trigger`.
type Distances struct {
	// ConfidentGap: vector search is sure of its first note when it is
	// this much nearer the question than the second.
	ConfidentGap float64
	// FTSMargin is not a distance but is measured with them: full text is
	// sure of its first note, and outvotes vector search with the
	// confident bonus, when the note's BM25 leads the second's by this
	// share of itself. The stronger a model's vector search, the surer
	// full text must be.
	FTSMargin float64
	// VectorWeight is not a distance either: the vector arm's weight when
	// the fusion is by scores (retrieval.fusion_by score).
	VectorWeight float64
	// FuseByScore: retrieval.fusion_by auto fuses this model's searches by
	// scores rather than by ranks, measured better with it.
	FuseByScore bool
}

// Options tune a model as it loads.
type Options struct {
	// Workers is the number of goroutines a call's work is split across;
	// 0 means GOMAXPROCS. USE-lite spreads its windows over GOMAXPROCS
	// whatever it says.
	Workers int
}

// Model is a loaded built-in model. Embed embeds texts as given: the
// caller puts the model's prefixes before them.
type Model interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dim is the length of the vectors the model returns.
	Dim() int
	// Close releases what the model holds; it must not be used afterwards.
	Close() error
}

// Backgrounder is a Model that embeds the vault on a view of its own, on
// threads of the lowest priority (Encoder's).
type Backgrounder interface {
	Model
	// Background is the model as a background embedder runs it, sharing
	// its weights. Close it before the model.
	Background() Model
}

// ErrModelNotFound is wrapped by the error of a model whose files are not
// in its folder.
var ErrModelNotFound = errors.New("model file not found")

// DefaultDir is the directory of the built-in models when none is
// configured (models.builtin_dir), and where the fetch puts them then:
// ${XDG_CACHE_HOME:-$HOME/.cache}/vaultask, on every system.
func DefaultDir() string {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "vaultask")
}

// Opener is the Open of a model package whose load returns its own type
// of model: an error is returned as a nil Model.
func Opener[M Model](load func(s *Spec, dir string, opts Options) (M, error)) func(s *Spec, dir string, opts Options) (Model, error) {
	return func(s *Spec, dir string, opts Options) (Model, error) {
		m, err := load(s, dir, opts)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}

// Load loads the model from dir, its folder.
func (s *Spec) Load(dir string, opts Options) (Model, error) {
	if dir == "" {
		return nil, fmt.Errorf("%s: no model directory given", s.Name)
	}
	return s.Open(s, dir, opts)
}

// Digest names the files the model reads by their pinned sums (a
// modelfile digest), for the index to record with the vectors embedded
// with them: another release of the files is another vector space.
func (s *Spec) Digest() string { return s.Sums.Digest(s.Files...) }

// In is the model's folder in builtinDir, the directory of the built-in
// models; builtinDir itself when it holds the model's first file instead
// (one model's files fetched straight into it, as before two models were
// built in).
func (s *Spec) In(builtinDir string) string {
	if _, err := os.Stat(filepath.Join(builtinDir, s.Files[0])); !errors.Is(err, fs.ErrNotExist) {
		return builtinDir
	}
	return filepath.Join(builtinDir, s.Dir)
}

// Fetch makes the model's folder of builtinDir, the directory of the
// built-in models, hold its files, each with its pinned sum, from its
// Source (internal/modelfetch), and reports whether it downloaded them:
// a folder that holds them all already costs no request.
func (s *Spec) Fetch(ctx context.Context, builtinDir string) (bool, error) {
	var f modelfetch.Fetcher
	return f.Fetch(ctx, s.Source, s.Sums, filepath.Join(builtinDir, s.Dir))
}

// FetchCommand is how to fetch the model's files into dir, its folder, or
// a directory holding them.
func (s *Spec) FetchCommand(dir string) string {
	builtinDir := dir
	if filepath.Base(dir) == s.Dir {
		builtinDir = filepath.Dir(dir)
	}
	return "vaultask fetch-model --dir " + builtinDir + " " + s.Name
}

// LoadError is the error of a model that could not load the file name in
// dir: a missing file wraps ErrModelNotFound, a damaged one
// modelfile.ErrMismatch, and both name the command that fetches it; a
// foreign one says what is wrong with it.
func (s *Spec) LoadError(dir, name string, err error) error {
	path := filepath.Join(dir, name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w: %s (run %s)", s.Name, ErrModelNotFound, path, s.FetchCommand(dir))
	case errors.Is(err, modelfile.ErrMismatch), errors.Is(err, modelfile.ErrChanged):
		return fmt.Errorf("%s: %w: damaged, or not the file the fetch installs (run %s to fetch it again)", s.Name, err, s.FetchCommand(dir))
	}
	return fmt.Errorf("%s: %s: %w", s.Name, path, err)
}
