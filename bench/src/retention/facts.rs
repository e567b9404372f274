//! Planted facts and decoys: exact values (ids, numbers, paths, constraints, decisions), the
//! sentence or line that states each one, and the subject words a later question would use.
//!
//! Every value is unique in its session and shaped so filler cannot produce it (an uppercase id,
//! or a digit run of four or more); a decoy has the same shape but is checked never to occur.

use std::collections::BTreeSet;

use annal_support::rng::Rng;
use annal_support::sessions::prose::{codename, id_chars};

/// Where a fact is stated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FactClass {
    /// In a user message.
    User,
    /// In assistant prose.
    Assistant,
    /// In a tool's output.
    Tool,
}

impl FactClass {
    /// The three classes, in report order.
    pub const ALL: [FactClass; 3] = [FactClass::User, FactClass::Assistant, FactClass::Tool];

    /// The report label.
    pub fn label(self) -> &'static str {
        match self {
            FactClass::User => "user",
            FactClass::Assistant => "assistant",
            FactClass::Tool => "tool",
        }
    }
}

/// One planted fact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    /// Where it is stated.
    pub class: FactClass,
    /// The exact value a closed-book answer must quote.
    pub value: String,
    /// The words a question about it would search for (its area and noun, never its codename or
    /// value: other facts share them).
    pub query: String,
    /// The turn that states it.
    pub turn: usize,
    /// The record that states it.
    pub entry_id: String,
}

/// A value shaped like a fact's that occurs nowhere in the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoy {
    /// The value.
    pub value: String,
}

/// A fact before it is placed: the statement to insert, its value and subject.
#[derive(Clone, Debug)]
pub struct Statement {
    /// A sentence for prose, or a line for tool output.
    pub text: String,
    /// The exact value.
    pub value: String,
    /// The subject words.
    pub query: String,
}

/// The context words of facts' subjects: each fact is about one of these areas, and many facts
/// share one, so a question naming an area and a noun is ambiguous the way a real one is.
const AREAS: [&str; 8] = ["billing", "search", "login", "export", "payments", "reports", "sync", "upload"];

/// Draws fresh codenames and values, never the same twice in one session.
#[derive(Debug, Default)]
pub struct ValueSource {
    used: BTreeSet<String>,
}

impl ValueSource {
    fn fresh(&mut self, rng: &mut Rng, make: impl Fn(&mut Rng) -> String) -> String {
        loop {
            let value = make(rng);
            if self.used.insert(value.clone()) {
                return value;
            }
        }
    }

    /// A codename no other fact or decoy of the session uses.
    pub fn subject(&mut self, rng: &mut Rng) -> String {
        self.fresh(rng, codename)
    }

    /// A value of kind `kind % 5` (id, number, path, constraint, decision).
    pub fn value(&mut self, rng: &mut Rng, kind: usize, subject: &str) -> String {
        match kind % 5 {
            0 => self.fresh(rng, |r| format!("TKT-{}", id_chars(r, 6))),
            1 => self.fresh(rng, |r| format!("{}.{:02}", r.between(10_000, 99_999), r.between(0, 99))),
            2 => {
                let subject = subject.to_owned();
                self.fresh(rng, move |r| {
                    format!("src/{subject}/{}_{}.rs", id_chars(r, 3).to_lowercase(), r.between(1000, 9999))
                })
            }
            3 => self.fresh(rng, |r| format!("{} rows", r.between(1_000, 9_999))),
            _ => self.fresh(rng, |r| format!("plan-{}-{}", id_chars(r, 4), r.between(1000, 9999))),
        }
    }

    /// A fact of kind `kind` worded for `class`. Its statement names a unique codename, an area
    /// and a noun; the question names only the area and the noun, which other facts share.
    pub fn statement(&mut self, rng: &mut Rng, kind: usize, class: FactClass) -> Statement {
        let subject = self.subject(rng);
        let value = self.value(rng, kind, &subject);
        let area = AREAS[rng.between(0, AREAS.len() - 1)];
        let noun = ["ticket", "quota", "module", "batch limit", "rollout plan"][kind % 5];
        let text = match (kind % 5, class) {
            (0, FactClass::Tool) => format!("INFO {area} ticket for {subject} assigned {value}"),
            (0, _) => format!("The {area} ticket for {subject} is {value}."),
            (1, FactClass::Tool) => format!("{area}_quota[{subject}] = {value}"),
            (1, _) => format!("The {area} quota for {subject} is {value} per hour."),
            (2, FactClass::Tool) => format!("{area} module for {subject} found at {value}"),
            (2, _) => format!("The {area} module for {subject} lives in {value}."),
            (3, FactClass::User) => {
                format!("Constraint: the {area} batch limit for {subject} must never exceed {value}.")
            }
            (3, FactClass::Tool) => format!("{area} batch limit ({subject}): {value}"),
            (3, _) => format!("The {area} batch limit for {subject} is {value}."),
            (_, FactClass::Tool) => format!("{area} rollout plan ({subject}) = {value}"),
            (_, FactClass::User) => format!("Decision: the {area} rollout plan for {subject} is {value}."),
            (_, _) => format!("We decided the {area} rollout plan for {subject} is {value}."),
        };
        Statement { text, value, query: format!("{area} {noun}") }
    }

    /// A decoy: a fresh value of kind `kind` (the caller checks it occurs nowhere).
    pub fn decoy(&mut self, rng: &mut Rng, kind: usize) -> Decoy {
        let subject = self.subject(rng);
        Decoy { value: self.value(rng, kind, &subject) }
    }
}

/// How many facts of each class a session of `total` facts plants: 80% assistant, 10% user,
/// 10% tool (tool facts go to assistant prose when the profile has no tools).
pub fn class_plan(total: usize, has_tools: bool) -> Vec<FactClass> {
    let user = total / 10;
    let tool = if has_tools { total / 10 } else { 0 };
    let assistant = total - user - tool;
    let mut plan = vec![FactClass::User; user];
    plan.extend(std::iter::repeat_n(FactClass::Assistant, assistant));
    plan.extend(std::iter::repeat_n(FactClass::Tool, tool));
    plan
}
