-- The notes written last, for the feed's check every ten seconds that the
-- database is still the one the index was taken from (index.Store.RecentRevs):
-- without it the check read every row of docs and sorted them, on the hub
-- index 67 MB of the file mapped into the process each time.
CREATE INDEX docs_recent ON docs(indexed_at DESC, doc_id) WHERE source_id != '';
