package feed

import (
	"errors"
	"fmt"

	"github.com/vaultask/vaultask/feed/livesync"
	"github.com/vaultask/vaultask/vault"
)

// decodeError turns the decoder's vault-wide errors into ErrEncryptedVault;
// they stop a follower, since no later document can be read either.
func (c *Couch) decodeError(err error) error {
	switch {
	case errors.Is(err, livesync.ErrEncrypted):
		return fmt.Errorf("%w: database %q needs LiveSync's passphrase, and none is given: %w", ErrEncryptedVault, c.database(), err)
	case errors.Is(err, livesync.ErrWrongPassphrase):
		return fmt.Errorf("%w: the passphrase given does not decrypt database %q: %w", ErrEncryptedVault, c.database(), err)
	case errors.Is(err, livesync.ErrNoSalt):
		return fmt.Errorf("%w: database %q has no readable %s: %w", ErrEncryptedVault, c.database(), livesync.SyncParametersID, err)
	}
	return err
}

// fatalDecode reports whether a Decode error concerns the whole vault rather
// than one document.
func fatalDecode(err error) bool {
	return errors.Is(err, livesync.ErrEncrypted) || errors.Is(err, livesync.ErrWrongPassphrase) || errors.Is(err, livesync.ErrNoSalt)
}

// warnNewerFormat warns of a version document newer than the decoder knows.
func (c *Couch) warnNewerFormat(version int) {
	c.log.Warn("the database format is newer than this reader knows; notes may be misread", keyVersion, version, keyKnown, livesync.FormatVersion)
}

// derivedID is the _id LiveSync gives path in this vault: of two documents
// that claim one path, the one with this id is the current one.
func (c *Couch) derivedID(path string) string {
	obfuscation := ""
	if c.settings.UsePathObfuscation {
		obfuscation = c.passphrase
	}
	return livesync.DocumentID(path, c.settings.HandleFilenameCaseSensitive, obfuscation)
}

// skipReason says why a live decoded note is not indexed, for its status,
// or "" when it is: a markdown note of the corpus at a clean path (which its
// Path is then normalised to). Binary attachments are never read.
func (c *Couch) skipReason(n *livesync.Note) string {
	clean, err := vault.CleanPath(n.Path)
	if err != nil {
		return err.Error()
	}
	n.Path = clean
	if n.Binary {
		return "binary attachment: only text notes are indexed"
	}
	return c.corpus.Excluded(n.Path)
}

// indexable reports whether a decoded note is indexed (see skipReason).
func (c *Couch) indexable(n *livesync.Note) bool {
	return !n.Deleted && c.skipReason(n) == ""
}

// prefer reports whether a should index the path both claim rather than b.
func (c *Couch) prefer(a, b livesync.Doc) bool {
	aDerived, bDerived := c.derivedID(a.Note.Path) == a.ID, c.derivedID(b.Note.Path) == b.ID
	switch {
	case aDerived != bDerived:
		return aDerived
	case !a.Note.Mtime.Equal(b.Note.Mtime):
		return a.Note.Mtime.After(b.Note.Mtime)
	}
	return a.ID > b.ID
}
