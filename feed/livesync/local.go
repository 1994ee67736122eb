package livesync

import (
	"encoding/json"
	"fmt"
	"time"
)

// Ids of the _local documents a reader GETs explicitly; they never appear in
// _changes or _all_docs.
const (
	SyncParametersID = "_local/obsidian_livesync_sync_parameters"
	MilestoneID      = "_local/obsydian_livesync_milestone"
)

// SyncParameters is _local/obsidian_livesync_sync_parameters. It exists
// even without E2EE, so it is not an E2EE signal on its own.
type SyncParameters struct {
	ProtocolVersion int
	// PBKDF2Salt is the salt of the V2 master key, for NewDecoder.
	PBKDF2Salt []byte
}

// ParseSyncParameters parses the sync-parameters document.
func ParseSyncParameters(raw []byte) (SyncParameters, error) {
	var doc struct {
		ProtocolVersion int    `json:"protocolVersion"`
		PBKDF2Salt      string `json:"pbkdf2salt"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return SyncParameters{}, fmt.Errorf("sync parameters: %w: %w", ErrMalformed, err)
	}
	if doc.PBKDF2Salt == "" {
		return SyncParameters{}, fmt.Errorf("sync parameters: %w: no pbkdf2salt", ErrMalformed)
	}
	salt, err := decodeBase64(doc.PBKDF2Salt)
	if err != nil {
		return SyncParameters{}, fmt.Errorf("sync parameters: %w: pbkdf2salt: %w", ErrMalformed, err)
	}
	return SyncParameters{ProtocolVersion: doc.ProtocolVersion, PBKDF2Salt: salt}, nil
}

// Milestone is what a reader needs from _local/obsydian_livesync_milestone.
type Milestone struct {
	Created time.Time
	// Locked means a rebuild of the remote is in progress.
	Locked bool
	// Cleaned means the remote was cleaned up.
	Cleaned bool
	// Settings are the vault's preferred settings (tweak_values.PREFERRED,
	// else those of the first accepted node that published any).
	Settings Settings
}

// Settings are the milestone's tweak values that change how documents read.
type Settings struct {
	// Encrypt: the vault is end-to-end encrypted; a follower without a
	// passphrase should refuse to start.
	Encrypt bool `json:"encrypt"`
	// UsePathObfuscation: ids are "f:" hashes (see DocumentID).
	UsePathObfuscation bool `json:"usePathObfuscation"`
	// HandleFilenameCaseSensitive: ids keep the path's case; false (or
	// unset) means ids are lower-cased.
	HandleFilenameCaseSensitive bool   `json:"handleFilenameCaseSensitive"`
	E2EEAlgorithm               string `json:"E2EEAlgorithm"`
	EnableCompression           bool   `json:"enableCompression"`
	UseEden                     bool   `json:"useEden"`
	UseDynamicIterationCount    bool   `json:"useDynamicIterationCount"`
	HashAlg                     string `json:"hashAlg"`
	ChunkSplitterVersion        string `json:"chunkSplitterVersion"`
}

// ParseMilestone parses the milestone document (plugin 0.23.5 and later).
func ParseMilestone(raw []byte) (Milestone, error) {
	var doc struct {
		Created       float64             `json:"created"`
		Locked        bool                `json:"locked"`
		Cleaned       bool                `json:"cleaned"`
		AcceptedNodes []string            `json:"accepted_nodes"`
		TweakValues   map[string]Settings `json:"tweak_values"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Milestone{}, fmt.Errorf("milestone: %w: %w", ErrMalformed, err)
	}
	m := Milestone{Created: millis(doc.Created), Locked: doc.Locked, Cleaned: doc.Cleaned}
	if s, ok := doc.TweakValues["PREFERRED"]; ok {
		m.Settings = s
		return m, nil
	}
	for _, node := range doc.AcceptedNodes {
		if s, ok := doc.TweakValues[node]; ok {
			m.Settings = s
			break
		}
	}
	return m, nil
}
