"""SQLite's own draw statements, on the sqlite3 connection."""
