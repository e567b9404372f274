//! The SQLite schemas of the agents whose databases annal reads, as each agent's own
//! migrations create them, for tests that build such databases (docs/import.md names the
//! versions).

/// OpenCode 1.2 (`opencode.db`): its first migration, the tables annal reads and `project`.
pub const OPENCODE: &str = "
    CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text,
        `icon_url` text, `icon_color` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
        `time_initialized` integer, `sandboxes` text NOT NULL);
    CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
        `time_updated` integer NOT NULL, `data` text NOT NULL,
        CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE);
    CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
        `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL,
        CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE);
    CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `parent_id` text, `slug` text NOT NULL,
        `directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL, `share_url` text,
        `summary_additions` integer, `summary_deletions` integer, `summary_files` integer, `summary_diffs` text,
        `revert` text, `permission` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
        `time_compacting` integer, `time_archived` integer,
        CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE);
    CREATE INDEX `message_session_idx` ON `message` (`session_id`);
    CREATE INDEX `part_message_idx` ON `part` (`message_id`);
";

/// Crush (`crush.db`) and, up to `summary_message_id`, the Go OpenCode (`opencode.db`): the
/// migrations in order (`internal/db/migrations`).
pub const CRUSH: &str = "
        CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
            message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
            prompt_tokens INTEGER NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
            completion_tokens INTEGER NOT NULL DEFAULT 0 CHECK (completion_tokens>= 0),
            cost REAL NOT NULL DEFAULT 0.0 CHECK (cost >= 0.0),
            updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL);
        CREATE TRIGGER update_sessions_updated_at AFTER UPDATE ON sessions BEGIN
            UPDATE sessions SET updated_at = strftime('%s', 'now') WHERE id = new.id; END;
        CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
            parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL, finished_at INTEGER,
            FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE);
        CREATE TRIGGER update_messages_updated_at AFTER UPDATE ON messages BEGIN
            UPDATE messages SET updated_at = strftime('%s', 'now') WHERE id = new.id; END;
        CREATE TRIGGER update_session_message_count_on_insert AFTER INSERT ON messages BEGIN
            UPDATE sessions SET message_count = message_count + 1 WHERE id = new.session_id; END;
        ALTER TABLE sessions ADD COLUMN summary_message_id TEXT;
        ALTER TABLE messages ADD COLUMN provider TEXT;
        ALTER TABLE messages ADD COLUMN is_summary_message INTEGER DEFAULT 0 NOT NULL;
        ALTER TABLE sessions ADD COLUMN todos TEXT;";

/// goose (`sessions.db`): `create_schema` at schema version 16, less the tables annal does not
/// read.
pub const GOOSE: &str = "
        CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY,
            applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
        INSERT OR IGNORE INTO schema_version (version) VALUES (16);
        CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '',
            description TEXT NOT NULL DEFAULT '', user_set_name BOOLEAN DEFAULT FALSE,
            session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
            created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
            extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER,
            output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER,
            accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER,
            accumulated_output_tokens INTEGER, accumulated_cache_read_tokens INTEGER,
            accumulated_cache_write_tokens INTEGER, accumulated_cost REAL, schedule_id TEXT,
            recipe_json TEXT, user_recipe_values_json TEXT, provider_name TEXT, model_config_json TEXT,
            goose_mode TEXT NOT NULL DEFAULT 'auto', archived_at TIMESTAMP, project_id TEXT,
            parent_session_id TEXT);
        CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT,
            session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
            content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
            timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT);
        CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id);
        CREATE INDEX IF NOT EXISTS idx_messages_timestamp ON messages(timestamp);
        CREATE INDEX IF NOT EXISTS idx_messages_message_id ON messages(message_id);
";

/// Zed (`threads/threads.db`): the `threads` table of `crates/agent/src/db.rs` with the columns
/// later versions add (`parent_id`, `folder_paths`, `folder_paths_order`, `created_at`).
pub const ZED: &str = "
        CREATE TABLE IF NOT EXISTS threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL,
            updated_at TEXT NOT NULL, data_type TEXT NOT NULL, data BLOB NOT NULL);
        ALTER TABLE threads ADD COLUMN parent_id TEXT;
        ALTER TABLE threads ADD COLUMN folder_paths TEXT;
        ALTER TABLE threads ADD COLUMN folder_paths_order TEXT;
        ALTER TABLE threads ADD COLUMN created_at TEXT;
";

/// Cursor's global `state.vscdb`: VS Code's key-value table, and Cursor's own beside it (the
/// same shape), as the public readers of it find them.
pub const CURSOR: &str = "
        CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
        CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
";

/// Kiro CLI's `data.sqlite3` (`crates/chat-cli/src/database/sqlite_migrations/`): the older
/// one-per-folder table, and `008_multiple_conversations_per_path.sql` after it.
pub const KIRO: &str = "
        CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE conversations_v2 (
            key TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            value TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (key, conversation_id)
        );
        CREATE INDEX idx_conversations_v2_key_updated ON conversations_v2(key, updated_at DESC);
        CREATE INDEX idx_conversations_v2_updated_at ON conversations_v2(updated_at DESC);
        CREATE TABLE auth_kv (key TEXT PRIMARY KEY, value TEXT);
";

/// A Cursor CLI chat's `store.db` (`~/.cursor/chats/<folder hash>/<agent>/`), as the public
/// readers of it create one.
pub const CURSOR_CHAT: &str = "
        CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
";
