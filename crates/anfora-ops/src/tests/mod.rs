mod rules;
mod values;
