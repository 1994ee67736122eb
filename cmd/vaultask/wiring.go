package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/rag/web"
)

var _ config.ModelPolicy = llm.Policy{}

// defaultConfigFile is read when neither --config nor VAULTASK_CONFIG names a
// file and it exists in the working directory.
const defaultConfigFile = "config.yaml"

// newFlagSet returns a subcommand's flag set with the flags every command
// shares; the returned pointer is the --config value.
func (m *Main) newFlagSet(name, usage string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	cfgPath := fs.String("config", "", "config file (default $VAULTASK_CONFIG, else ./config.yaml if present, else built-in defaults)")
	fs.Usage = func() {
		fmt.Fprintf(m.Stderr, "Usage: vaultask %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return fs, cfgPath
}

// parseFlags parses args; after -h it returns errHelp, which ends the
// command successfully without running it.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return errHelp
	}
	if err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

func (m *Main) getenv(key string) string {
	for _, kv := range m.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// configure parses a command's flags, then loads its configuration and
// builds its logger: the start every subcommand shares.
func (m *Main) configure(fs *flag.FlagSet, cfgPath *string, args []string) (config.Config, *slog.Logger, error) {
	if err := parseFlags(fs, args); err != nil {
		return config.Config{}, nil, err
	}
	cfg, err := m.loadConfig(*cfgPath)
	if err != nil {
		return cfg, nil, err
	}
	return cfg, newLogger(m.Stderr, cfg.Log), nil
}

// loadConfig reads the layered configuration for a command.
func (m *Main) loadConfig(flagPath string) (config.Config, error) {
	path := flagPath
	if path == "" {
		path = m.getenv(config.EnvConfigFile)
	}
	if path == "" {
		if _, err := os.Stat(defaultConfigFile); err == nil {
			path = defaultConfigFile
		}
	}
	cfg, err := config.Load(path, m.Env)
	if err == nil {
		err = m.checkConfig(cfg)
	}
	if err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// checkConfig is the startup validation beyond config's own: the model ids
// against the providers, and the key a web provider needs.
func (m *Main) checkConfig(cfg config.Config) error {
	if err := cfg.ValidateModels(llm.Policy{}); err != nil {
		return err
	}
	if cfg.Web.Enabled {
		if key := web.KeyEnv(cfg.Web.Provider); key != "" && m.getenv(key) == "" {
			return fmt.Errorf("web.provider %s needs an API key: set %s (or web.enabled: false)", cfg.Web.Provider, key)
		}
	}
	return nil
}

func newLogger(w io.Writer, c config.Log) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level)) // validated by config
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func storeOptions(cfg config.Config, log *slog.Logger) (index.Options, error) {
	space, err := embeddingSpace(cfg)
	if err != nil {
		return index.Options{}, err
	}
	return index.Options{
		Path:           cfg.Index.Path,
		Space:          space,
		Sensitivity:    index.Classifier{PersonalPaths: cfg.Sensitivity.PersonalPaths},
		FrontmatterKey: cfg.Sensitivity.FrontmatterKey,
		Logger:         log,
	}, nil
}

// openIndex opens the index, saying which setting moves it when its path
// is unusable.
func openIndex(ctx context.Context, opts index.Options) (*index.Store, error) {
	s, err := index.Open(ctx, opts)
	if errors.Is(err, index.ErrIndexPath) {
		return nil, fmt.Errorf("%w (the index is at index.path, env VAULTASK_INDEX__PATH)", err)
	}
	return s, err
}

// openExisting opens the index read-only, with a clear error when there is none yet.
func openExisting(ctx context.Context, opts index.Options) (*index.Store, error) {
	if _, err := os.Stat(opts.Path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no index at %s (index.path): run `vaultask index` first", opts.Path)
	}
	opts.ReadOnly = true
	return openIndex(ctx, opts)
}
