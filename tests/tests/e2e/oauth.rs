//! The authorization and resource servers: refusal by refusal on both backends (`flows`),
//! and the whole journey through the official TypeScript (`node`) and Python (`python`) SDKs.

mod flows;
mod node;
mod python;
