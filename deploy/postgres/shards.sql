-- The second shard database of compose.yaml (RAFFLE_SHARD_URLS), on the same server as the
-- first; in production each shard is a server of its own (docs/production.md, sizing).
CREATE DATABASE raffle_1 OWNER raffle;
