//! Appending and forking: records prepared and chained, gathered into groups by the writer,
//! committed, and each caller answered with its receipt; the claims and the durable-position
//! watermark that compaction and readers rely on.

pub(crate) mod apply;
pub(crate) mod claim;
pub(crate) mod fork;
pub(crate) mod group;
pub(crate) mod json_string;
pub(crate) mod prepare;
pub(crate) mod receipts;
pub(crate) mod reply;
pub(crate) mod watermark;
pub(crate) mod writer;
