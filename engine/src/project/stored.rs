//! The stored form of a checkpoint's plan (the `checkpoints` table's values).
//!
//! Layout, integers little endian (docs/format.md):
//! ```text
//! "ACKP" u8 version=1  u8 algorithm tag  u64 upto  u64 end  u64 tail_start  6×u32 budget
//! u8 has_summary  [32] summary hash (zero when none)  u64 frozen_tokens  u64 tail_tokens
//! u32 n, n × u64                                  kept assistant sourceOrders
//! u32 n, n × (u64 order, u8 fate, u32 head, u32 tail)   user cuts (fate 1 cut, 2 omitted)
//! u32 n, n × (u64 order, u32 block, u8 has_call, u64 call order, u32 call block)   rows
//! u32 n, n × (u64 order, u32 block, u32 head, u32 tail)  tail block cuts
//! ```
//! The table is a cache: a value that does not decode is re-derived from its receipt.

use crate::project::{Algorithm, BlockCut, Budget, Fate, Plan, RowRef, UserCut};

const MAGIC: &[u8; 4] = b"ACKP";
const VERSION: u8 = 1;

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
}

/// Encodes a plan.
pub(crate) fn encode_plan(plan: &Plan) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(128 + 8 * plan.kept_assistant.len() + 25 * plan.rows.len()));
    w.0.extend_from_slice(MAGIC);
    w.u8(VERSION);
    w.u8(plan.algorithm.tag());
    w.u64(plan.upto);
    w.u64(plan.end);
    w.u64(plan.tail_start);
    for field in plan.budget.fields() {
        w.u32(field);
    }
    w.u8(u8::from(plan.summary.is_some()));
    w.0.extend_from_slice(&plan.summary.unwrap_or([0; 32]));
    w.u64(plan.frozen_tokens);
    w.u64(plan.tail_tokens);
    w.len(plan.kept_assistant.len());
    for order in &plan.kept_assistant {
        w.u64(*order);
    }
    w.len(plan.user_cuts.len());
    for cut in &plan.user_cuts {
        w.u64(cut.order);
        let (fate, head, tail) = match cut.fate {
            Fate::Cut { head_tokens, tail_tokens } => (1, head_tokens, tail_tokens),
            Fate::Omitted | Fate::Kept => (2, 0, 0),
        };
        w.u8(fate);
        w.u32(head);
        w.u32(tail);
    }
    w.len(plan.rows.len());
    for row in &plan.rows {
        w.u64(row.order);
        w.u32(row.block);
        w.u8(u8::from(row.call.is_some()));
        let (order, block) = row.call.unwrap_or((0, 0));
        w.u64(order);
        w.u32(block);
    }
    w.len(plan.cuts.len());
    for cut in &plan.cuts {
        w.u64(cut.order);
        w.u32(cut.block);
        w.u32(cut.head_tokens);
        w.u32(cut.tail_tokens);
    }
    w.0
}

struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> Result<&'b [u8], String> {
        let end = self.at.checked_add(n).filter(|end| *end <= self.bytes.len());
        let end = end.ok_or_else(|| format!("plan ends at byte {} of {}", self.bytes.len(), self.at + n))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, String> {
        let mut raw = [0u8; 4];
        raw.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(raw))
    }
    fn u64(&mut self) -> Result<u64, String> {
        let mut raw = [0u8; 8];
        raw.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(raw))
    }
    /// A count, bounded by the bytes left so a damaged count cannot allocate much.
    fn count(&mut self, item_bytes: usize) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n.saturating_mul(item_bytes) > self.bytes.len() - self.at {
            return Err(format!("plan lists {n} items that its bytes cannot hold"));
        }
        Ok(n)
    }
}

/// Decodes a plan written by [`encode_plan`].
pub(crate) fn decode_plan(bytes: &[u8]) -> Result<Plan, String> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(4)? != MAGIC {
        return Err("not a checkpoint plan".into());
    }
    let version = r.u8()?;
    if version != VERSION {
        return Err(format!("plan layout version {version}, this build reads {VERSION}"));
    }
    let tag = r.u8()?;
    let algorithm = Algorithm::from_tag(tag).ok_or_else(|| format!("unknown algorithm tag {tag}"))?;
    let upto = r.u64()?;
    let end = r.u64()?;
    let tail_start = r.u64()?;
    let mut fields = [0u32; 6];
    for field in &mut fields {
        *field = r.u32()?;
    }
    let has_summary = r.u8()? != 0;
    let mut hash = [0u8; 32];
    hash.copy_from_slice(r.take(32)?);
    let frozen_tokens = r.u64()?;
    let tail_tokens = r.u64()?;
    let mut kept_assistant = Vec::new();
    for _ in 0..r.count(8)? {
        kept_assistant.push(r.u64()?);
    }
    let mut user_cuts = Vec::new();
    for _ in 0..r.count(17)? {
        let order = r.u64()?;
        let fate = r.u8()?;
        let (head_tokens, tail_tokens) = (r.u32()?, r.u32()?);
        let fate = match fate {
            1 => Fate::Cut { head_tokens, tail_tokens },
            2 => Fate::Omitted,
            other => return Err(format!("unknown user fate {other}")),
        };
        user_cuts.push(UserCut { order, fate });
    }
    let mut rows = Vec::new();
    for _ in 0..r.count(25)? {
        let order = r.u64()?;
        let block = r.u32()?;
        let has_call = r.u8()? != 0;
        let (call_order, call_block) = (r.u64()?, r.u32()?);
        rows.push(RowRef { order, block, call: has_call.then_some((call_order, call_block)) });
    }
    let mut cuts = Vec::new();
    for _ in 0..r.count(20)? {
        cuts.push(BlockCut {
            order: r.u64()?,
            block: r.u32()?,
            head_tokens: r.u32()?,
            tail_tokens: r.u32()?,
        });
    }
    if r.at != bytes.len() {
        return Err(format!("{} bytes after the plan", bytes.len() - r.at));
    }
    let sorted = kept_assistant.windows(2).all(|w| w[0] < w[1])
        && user_cuts.windows(2).all(|w| w[0].order < w[1].order);
    if !sorted || tail_start > end || upto > end {
        return Err("plan lists are out of order".into());
    }
    Ok(Plan {
        algorithm,
        budget: Budget::from_fields(fields),
        upto,
        end,
        tail_start,
        kept_assistant,
        user_cuts,
        rows,
        cuts,
        summary: has_summary.then_some(hash),
        frozen_tokens,
        tail_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_round_trip_and_damage_is_refused() {
        let plan = Plan {
            algorithm: Algorithm::SummarizedV1,
            budget: Budget::new(100_000, 8_000),
            upto: 500,
            end: 502,
            tail_start: 480,
            kept_assistant: vec![3, 9, 400],
            user_cuts: vec![
                UserCut { order: 5, fate: Fate::Cut { head_tokens: 256, tail_tokens: 128 } },
                UserCut { order: 7, fate: Fate::Omitted },
            ],
            rows: vec![
                RowRef { order: 20, block: 1, call: Some((19, 0)) },
                RowRef { order: 22, block: 0, call: None },
            ],
            cuts: vec![BlockCut { order: 490, block: 0, head_tokens: 1024, tail_tokens: 512 }],
            summary: Some([9; 32]),
            frozen_tokens: 12_345,
            tail_tokens: 6_789,
        };
        let bytes = encode_plan(&plan);
        assert_eq!(decode_plan(&bytes), Ok(plan));
        for cut in 0..bytes.len() {
            assert!(decode_plan(&bytes[..cut]).is_err());
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_plan(&longer).is_err());
    }
}
