use toolgate::tool;

/// Look up a customer.
#[tool(read_only, name = "a_tool_name_that_is_far_too_long_for_openai_anthropic_and_gemini_to_accept")]
fn lookup_customer(email: String) -> String {
    email
}

fn main() {}
