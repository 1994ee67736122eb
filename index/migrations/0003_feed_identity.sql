-- What identifies the database a feed follows, beside its checkpoint: a
-- database recreated under the same name (LiveSync's "rebuild remote") has
-- another identity, and its sequence starts over, so the checkpoint no longer
-- means anything and the follower reconciles from scratch.
ALTER TABLE feed_state ADD COLUMN identity TEXT NOT NULL DEFAULT '';
