-- At most one embedding space is being filled at a time, beside the active
-- one: the configured space when it is not the active one (index/spaces.go).
CREATE UNIQUE INDEX spaces_one_filling ON spaces(state) WHERE state = 'filling';
