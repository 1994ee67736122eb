// Package retry is the one capped, jittered backoff of the project and the
// clock its long-running loops (the feed's follower, the index's vectorizer)
// read and wait on, so that a test can control time and watch the waits.
//
// It imports no package of this module.
package retry
