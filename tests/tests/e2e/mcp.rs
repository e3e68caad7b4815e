//! The agent surface (MCP): the journey through rmcp's client with the tool list, budgets and
//! refusals (`tools`), the official Python SDK's journey (`python`), and the outside checkers,
//! the conformance suite and the Inspector CLI (`checks`).

mod checks;
mod python;
mod tools;
