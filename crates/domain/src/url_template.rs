//! RFC 6570 URL templates, as linkifiers and code playgrounds use them: a strict parser of the
//! expressions (levels 1 to 4: the operators `+ # . / ; ? &`, prefix `:N` and explode `*`
//! modifiers), the variable names a template uses, and expansion with string values.
//!
//! Literal text is accepted as the reference server accepts it (anything but braces and control
//! characters), so that templates such as `https://example.com/%%(foo)s` stay valid; the
//! expressions must follow the RFC's grammar exactly.

use std::collections::BTreeSet;

/// Why a template is not valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// A `{` without its `}`, a `}` without its `{`, or a `{` inside an expression.
    #[error("unbalanced braces")]
    UnbalancedBraces,
    /// An expression that breaks the RFC's grammar (empty, unknown or reserved operator, bad
    /// variable name or modifier).
    #[error("invalid expression {0}")]
    InvalidExpression(String),
    /// A control character in the literal text.
    #[error("control character in the template")]
    ControlCharacter,
}

/// An expression's operator (RFC 6570 section 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// `{var}`: simple string expansion.
    Simple,
    /// `{+var}`: reserved expansion.
    Reserved,
    /// `{#var}`: fragment expansion.
    Fragment,
    /// `{.var}`: label expansion with a dot prefix.
    Label,
    /// `{/var}`: path segments.
    Path,
    /// `{;var}`: path-style parameters.
    PathParameter,
    /// `{?var}`: form-style query.
    Query,
    /// `{&var}`: form-style query continuation.
    QueryContinuation,
}

/// How an operator expands its variables: (first, separator, named, if-empty, allow reserved).
struct Behaviour {
    first: &'static str,
    separator: char,
    named: bool,
    if_empty: &'static str,
    allow_reserved: bool,
}

impl Operator {
    fn from_char(c: char) -> Option<Operator> {
        Some(match c {
            '+' => Operator::Reserved,
            '#' => Operator::Fragment,
            '.' => Operator::Label,
            '/' => Operator::Path,
            ';' => Operator::PathParameter,
            '?' => Operator::Query,
            '&' => Operator::QueryContinuation,
            _ => return None,
        })
    }

    fn behaviour(self) -> Behaviour {
        let (first, separator, named, if_empty, allow_reserved) = match self {
            Operator::Simple => ("", ',', false, "", false),
            Operator::Reserved => ("", ',', false, "", true),
            Operator::Fragment => ("#", ',', false, "", true),
            Operator::Label => (".", '.', false, "", false),
            Operator::Path => ("/", '/', false, "", false),
            Operator::PathParameter => (";", ';', true, "", false),
            Operator::Query => ("?", '&', true, "=", false),
            Operator::QueryContinuation => ("&", '&', true, "=", false),
        };
        Behaviour {
            first,
            separator,
            named,
            if_empty,
            allow_reserved,
        }
    }
}

/// A variable of an expression with its modifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarSpec {
    /// The variable's name.
    pub name: String,
    /// `:N`: only the first N characters of the value.
    pub prefix: Option<usize>,
    /// `*`: explode (the same as no modifier for the string values expanded here).
    pub explode: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression(Operator, Vec<VarSpec>),
}

/// A parsed, valid URL template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlTemplate {
    parts: Vec<Part>,
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

/// `varname = varchar *( ["."] varchar )`, `varchar = ALPHA / DIGIT / "_" / pct-encoded`.
fn valid_varname(name: &str) -> bool {
    let bytes = name.as_bytes();
    let mut i = 0;
    let mut after_varchar = false;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() || b == b'_' {
            i += 1;
            after_varchar = true;
        } else if b == b'%' {
            if i + 2 >= bytes.len() || !(is_hex(bytes[i + 1]) && is_hex(bytes[i + 2])) {
                return false;
            }
            i += 3;
            after_varchar = true;
        } else if b == b'.' && after_varchar {
            i += 1;
            after_varchar = false;
        } else {
            return false;
        }
    }
    after_varchar
}

fn parse_varspec(spec: &str, expression: &str) -> Result<VarSpec, TemplateError> {
    let invalid = || TemplateError::InvalidExpression(format!("{{{expression}}}"));
    let (name, prefix, explode) = if let Some(name) = spec.strip_suffix('*') {
        (name, None, true)
    } else if let Some((name, length)) = spec.split_once(':') {
        // max-length = %x31-39 0*3DIGIT: 1 to 9999, no leading zero.
        let ok = (1..=4).contains(&length.len())
            && length.bytes().all(|b| b.is_ascii_digit())
            && !length.starts_with('0');
        if !ok {
            return Err(invalid());
        }
        (name, Some(length.parse().map_err(|_| invalid())?), false)
    } else {
        (spec, None, false)
    };
    if !valid_varname(name) {
        return Err(invalid());
    }
    Ok(VarSpec {
        name: name.to_owned(),
        prefix,
        explode,
    })
}

fn parse_expression(expression: &str) -> Result<Part, TemplateError> {
    let invalid = || TemplateError::InvalidExpression(format!("{{{expression}}}"));
    let mut chars = expression.chars();
    let first = chars.next().ok_or_else(invalid)?;
    let (operator, list) = match Operator::from_char(first) {
        Some(op) => (op, chars.as_str()),
        // `= , ! @ |` are reserved for future extensions; anything else must start a name.
        None if "=,!@|".contains(first) => return Err(invalid()),
        None => (Operator::Simple, expression),
    };
    let vars = list
        .split(',')
        .map(|spec| parse_varspec(spec, expression))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Part::Expression(operator, vars))
}

impl UrlTemplate {
    /// Parses a template; an error says what is wrong.
    pub fn parse(template: &str) -> Result<UrlTemplate, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            let literal_end = rest.find(['{', '}']).unwrap_or(rest.len());
            let literal = &rest[..literal_end];
            if literal.chars().any(char::is_control) {
                return Err(TemplateError::ControlCharacter);
            }
            if !literal.is_empty() {
                parts.push(Part::Literal(literal.to_owned()));
            }
            rest = &rest[literal_end..];
            if rest.is_empty() {
                break;
            }
            if rest.starts_with('}') {
                return Err(TemplateError::UnbalancedBraces);
            }
            let close = rest.find('}').ok_or(TemplateError::UnbalancedBraces)?;
            let expression = &rest[1..close];
            if expression.contains('{') {
                return Err(TemplateError::UnbalancedBraces);
            }
            parts.push(parse_expression(expression)?);
            rest = &rest[close + 1..];
        }
        Ok(UrlTemplate { parts })
    }

    /// The names of the variables the template uses, each once.
    pub fn variable_names(&self) -> BTreeSet<&str> {
        self.parts
            .iter()
            .filter_map(|part| match part {
                Part::Expression(_, vars) => Some(vars.iter().map(|v| v.name.as_str())),
                Part::Literal(_) => None,
            })
            .flatten()
            .collect()
    }

    /// Expands the template with string values; a variable whose `value` is `None` is
    /// undefined and left out, as the RFC says. Values are percent-encoded as UTF-8: everything
    /// but unreserved characters, and for `+` and `#` also reserved characters and existing
    /// percent-encoded triplets, which stay as they are.
    pub fn expand(&self, value: &dyn Fn(&str) -> Option<String>) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(text) => out.push_str(text),
                Part::Expression(operator, vars) => {
                    expand_expression(*operator, vars, value, &mut out)
                }
            }
        }
        out
    }
}

fn expand_expression(
    operator: Operator,
    vars: &[VarSpec],
    value: &dyn Fn(&str) -> Option<String>,
    out: &mut String,
) {
    let b = operator.behaviour();
    let mut first = true;
    for var in vars {
        let Some(mut v) = value(&var.name) else {
            continue;
        };
        if let Some(max) = var.prefix {
            if let Some((cut, _)) = v.char_indices().nth(max) {
                v.truncate(cut);
            }
        }
        if first {
            out.push_str(b.first);
            first = false;
        } else {
            out.push(b.separator);
        }
        if b.named {
            out.push_str(&var.name);
            if v.is_empty() {
                out.push_str(b.if_empty);
                continue;
            }
            out.push('=');
        }
        encode(&v, b.allow_reserved, out);
    }
}

const RESERVED: &[u8] = b":/?#[]@!$&'()*+,;=";

fn encode(value: &str, allow_reserved: bool, out: &mut String) {
    let bytes = value.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let keep = b.is_ascii_alphanumeric()
            || b"-._~".contains(&b)
            || (allow_reserved && RESERVED.contains(&b));
        if keep {
            out.push(b as char);
        } else if allow_reserved
            && b == b'%'
            && i + 2 < bytes.len()
            && is_hex(bytes[i + 1])
            && is_hex(bytes[i + 2])
        {
            out.push_str(&value[i..i + 3]);
            i += 3;
            continue;
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn valid(t: &str) -> bool {
        UrlTemplate::parse(t).is_ok()
    }

    #[test]
    fn accepts_what_the_reference_accepts() {
        for t in [
            "http://example.com/",
            "https://user:password@example.com/",
            "https://example.com/@user/thing",
            "https://example.com/!path",
            "https://example.com/foo[bar]",
            "https://example.com/{foo}",
            "https://example.com/{foo}{bars}",
            "https://example.com/{foo}/and/{bar}",
            "https://example.com/?foo={foo}",
            "https://example.com/%ab",
            "https://example.com/back%20to%20{back}",
            "https://example.com/%%",
            "https://example.com/%%(foo)s",
            "https://example.com{/foo,bar,baz}",
            "https://example.com/{?foo*}",
            "https://example.com/{+foo,bar}",
            "https://chat{.domain}.com/{#foo}",
            "https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name,chapter}{#fragment:5}",
            "https://e.com/{a.b}{%41x}{x:9999}",
            "$not_a_url$",
            "",
        ] {
            assert!(valid(t), "{t} should be valid");
        }
    }

    #[test]
    fn rejects_broken_expressions() {
        for t in [
            "https://example.com/{foo",
            "https://example.com/foo}",
            "https://example.com/{{}",
            "https://example.com/{//foo}",
            "https://example.com/{bar++}",
            "https://example.com/{}",
            "https://example.com/{+}",
            "https://example.com/{=foo}",
            "https://example.com/{,foo}",
            "https://example.com/{|foo}",
            "https://example.com/{foo,}",
            "https://example.com/{foo bar}",
            "https://example.com/{foo:0}",
            "https://example.com/{foo:10000}",
            "https://example.com/{foo:}",
            "https://example.com/{foo:1*}",
            "https://example.com/{.foo.}",
            "https://example.com/{a..b}",
            "https://example.com/{%4}",
            "https://example.com/{%zz}",
            "https://example.com/\n{foo}",
        ] {
            assert!(!valid(t), "{t} should be invalid");
        }
    }

    #[test]
    fn lists_variable_names_once() {
        let t = UrlTemplate::parse("https://e.com/{id}{?q,id*}{#frag:3}").unwrap();
        let names: Vec<&str> = t.variable_names().into_iter().collect();
        assert_eq!(names, ["frag", "id", "q"]);
    }

    fn expand(t: &str, vars: &[(&str, &str)]) -> String {
        let map: HashMap<&str, &str> = vars.iter().copied().collect();
        UrlTemplate::parse(t)
            .unwrap()
            .expand(&|n| map.get(n).map(|v| (*v).to_owned()))
    }

    #[test]
    fn expands_every_operator_as_the_rfc_examples() {
        let vars = [
            ("var", "value"),
            ("hello", "Hello World!"),
            ("path", "/foo/bar"),
            ("x", "1024"),
            ("y", "768"),
            ("empty", ""),
        ];
        let cases = [
            ("{var}", "value"),
            ("{hello}", "Hello%20World%21"),
            ("{+hello}", "Hello%20World!"),
            ("{+path}/here", "/foo/bar/here"),
            ("{#hello}", "#Hello%20World!"),
            ("{#path:6}/here", "#/foo/b/here"),
            ("{x,y}", "1024,768"),
            ("{var:3}", "val"),
            ("{var:30}", "value"),
            ("X{.var}", "X.value"),
            ("X{.x,y}", "X.1024.768"),
            ("{/var}", "/value"),
            ("{/var,x}/here", "/value/1024/here"),
            ("{;x,y}", ";x=1024;y=768"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"),
            ("{?x,y}", "?x=1024&y=768"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
            ("{&x,y,empty}", "&x=1024&y=768&empty="),
            ("{?undef}", ""),
            ("{undef,x}", "1024"),
            ("{/var*}", "/value"),
        ];
        for (t, want) in cases {
            assert_eq!(expand(t, &vars), want, "{t}");
        }
    }

    #[test]
    fn encodes_values_as_utf8_and_keeps_triplets_only_when_reserved_is_allowed() {
        let vars = [("v", "é/%41 %zz")];
        assert_eq!(expand("{v}", &vars), "%C3%A9%2F%2541%20%25zz");
        assert_eq!(expand("{+v}", &vars), "%C3%A9/%41%20%25zz");
        assert_eq!(expand("{v:1}", &vars), "%C3%A9");
    }
}
