package livesync

import (
	"fmt"
	"strings"
)

// tombstoneKind classifies a deleted document: a chunk's, a note's or one
// that is skipped, and why.
func tombstoneKind(r *rawDoc) (Kind, string) {
	if reason := reservedReason(r.ID); reason != "" {
		return KindSkip, "tombstone of " + reason
	}
	if r.Type == "leaf" || strings.HasPrefix(r.ID, "h:") {
		return KindChunkTombstone, ""
	}
	if reason := prefixReason(r.ID); reason != "" {
		return KindSkip, "tombstone of " + reason
	}
	return KindTombstone, ""
}

// skipReason applies FORMAT.md §1, in its order, to a live document, up to
// the path checks that need a decoded note.
func skipReason(r *rawDoc) string {
	if reason := reservedReason(r.ID); reason != "" {
		return reason
	}
	switch {
	case r.Type == "leaf":
		return ""
	case r.Type == "chunkpack":
		return "chunk pack (unsupported)"
	}
	if reason := prefixReason(r.ID); reason != "" {
		return reason
	}
	switch r.Type {
	case "plain", "newnote":
		if r.Children == nil {
			return fmt.Sprintf("%s document without children", r.Type)
		}
		return ""
	case "notes", "":
		if r.Children == nil && r.Data == nil {
			return "document without type, children or data"
		}
		return ""
	}
	return fmt.Sprintf("unknown type %q", r.Type)
}

// reservedReason names the documents that are never notes or chunks.
func reservedReason(id string) string {
	switch {
	case strings.HasPrefix(id, "_design/"):
		return "design document"
	case strings.HasPrefix(id, "_"):
		return "reserved document"
	case id == versionID:
		return "version document"
	case id == syncInfoID:
		return "sync-info document"
	}
	return ""
}

// prefixReason names the non-note documents that look like notes.
func prefixReason(id string) string {
	switch {
	case strings.HasPrefix(id, "h:"):
		return "chunk id on a non-leaf document"
	case strings.HasPrefix(id, "ix:"):
		return "customisation-sync document"
	case strings.HasPrefix(id, "i:"):
		return "hidden-file document"
	case strings.HasPrefix(id, "ps:"):
		return "plugin-sync document"
	}
	return ""
}
