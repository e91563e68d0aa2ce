mod indexing;
mod rules;
mod values;
