package index

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// errNewerIndex means the index was migrated by a newer vaultask: this one
// does not know its schema and must not write to it, nor trust what it
// reads.
var errNewerIndex = errors.New("the index was written by a newer vaultask")

// migrate applies every embedded migration not yet recorded in
// schema_migrations, in file-name order, each in its own transaction. An
// index holding a migration this binary does not know is refused with
// errNewerIndex before anything is applied.
func migrate(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	names, err := migrationNames()
	if err != nil {
		return err
	}
	if err := checkNotNewer(ctx, db, names); err != nil {
		return err
	}
	for _, name := range names {
		if err := applyMigration(ctx, db, name); err != nil {
			return err
		}
	}
	return nil
}

// migrationSteps are the work of migrations that SQL alone cannot do, run
// in the migration's transaction after its SQL.
var migrationSteps = map[string]func(ctx context.Context, tx *sql.Tx) error{
	"migrations/0014_vectors.sql": moveVec0Vectors,
}

// migrationNames are the embedded migrations in the order they apply.
func migrationNames() ([]string, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	sort.Strings(names)
	return names, err
}

// checkNotNewer fails with errNewerIndex when the index records a
// migration that is not among names.
func checkNotNewer(ctx context.Context, q rowQuerier, names []string) error {
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	applied, err := queryAll(ctx, q, one[string], `SELECT name FROM schema_migrations ORDER BY name`)
	if err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	for _, n := range applied {
		if !known[n] {
			return fmt.Errorf("%w (it has migration %s, this vaultask knows up to %s): upgrade vaultask, or move the index file away to rebuild it from the vault", errNewerIndex, strings.TrimPrefix(n, "migrations/"), strings.TrimPrefix(names[len(names)-1], "migrations/"))
		}
	}
	return nil
}

func applyMigration(ctx context.Context, db *sql.DB, name string) error {
	return inTx(ctx, db, "migration "+name, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		body, err := migrationFS.ReadFile(name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return err
		}
		if step := migrationSteps[name]; step != nil {
			if err := step(ctx, tx); err != nil {
				return err
			}
		}
		if err := bumpGraphVersion(ctx, tx); err != nil { // a migration may change what a walk reads
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)`, name, time.Now().UnixMilli()); err != nil {
			return err
		}
		version := strings.SplitN(strings.TrimPrefix(name, "migrations/"), "_", 2)[0]
		if v, err := strconv.Atoi(version); err == nil {
			return setMeta(ctx, tx, "schema_version", strconv.Itoa(v))
		}
		return nil
	})
}
