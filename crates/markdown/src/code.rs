//! Code blocks: Zulip's `codehilite` markup and the display names of code languages (the
//! names Pygments gives its lexers, which clients show and use for playgrounds).

use crate::escape;

/// Pygments' display name for a language name or alias, if known.
pub(crate) fn language_display_name(lang: &str) -> Option<&'static str> {
    let name = match lang {
        "python" | "py" | "python3" | "py3" | "sage" | "bazel" | "starlark" | "pyi" => "Python",
        "python2" | "py2" => "Python 2.x",
        "pycon" => "Python console session",
        "javascript" | "js" | "mjs" | "cjs" => "JavaScript",
        "typescript" | "ts" => "TypeScript",
        "jsx" | "react" => "JSX",
        "tsx" => "TSX",
        "json" | "json-object" => "JSON",
        "rust" | "rs" => "Rust",
        "c" => "C",
        "cpp" | "c++" | "cxx" | "hpp" => "C++",
        "csharp" | "c#" | "cs" => "C#",
        "java" => "Java",
        "kotlin" | "kt" => "Kotlin",
        "scala" => "Scala",
        "go" | "golang" => "Go",
        "ruby" | "rb" | "duby" => "Ruby",
        "php" | "php3" | "php4" | "php5" => "PHP",
        "perl" | "pl" => "Perl",
        "bash" | "sh" | "ksh" | "zsh" | "shell" | "openrc" => "Bash",
        "console" | "shell-session" => "Bash Session",
        "powershell" | "pwsh" | "posh" | "ps1" | "psm1" => "PowerShell",
        "bat" | "batch" | "dosbatch" | "winbatch" => "Batchfile",
        "html" => "HTML",
        "xml" => "XML",
        "css" => "CSS",
        "scss" => "SCSS",
        "sass" => "Sass",
        "less" => "LessCss",
        "sql" => "SQL",
        "postgresql" | "postgres" => "PostgreSQL SQL dialect",
        "mysql" => "MySQL",
        "sqlite3" => "sqlite3con",
        "yaml" | "yml" => "YAML",
        "toml" => "TOML",
        "ini" | "cfg" | "dosini" => "INI",
        "markdown" | "md" => "Markdown",
        "tex" | "latex" => "TeX",
        "diff" | "udiff" => "Diff",
        "haskell" | "hs" => "Haskell",
        "elixir" | "ex" | "exs" => "Elixir",
        "erlang" => "Erlang",
        "clojure" | "clj" => "Clojure",
        "ocaml" => "OCaml",
        "fsharp" | "f#" => "F#",
        "swift" => "Swift",
        "objective-c" | "objectivec" | "obj-c" | "objc" => "Objective-C",
        "dart" => "Dart",
        "lua" => "Lua",
        "r" | "splus" | "s" => "S",
        "julia" | "jl" => "Julia",
        "matlab" => "Matlab",
        "docker" | "dockerfile" => "Docker",
        "make" | "makefile" | "mf" | "bsdmake" => "Makefile",
        "cmake" => "CMake",
        "nginx" => "Nginx configuration file",
        "graphql" => "GraphQL",
        "protobuf" | "proto" => "Protocol Buffer",
        "vim" => "VimL",
        "elm" => "Elm",
        "zig" => "Zig",
        "nix" | "nixos" => "Nix",
        "groovy" => "Groovy",
        "text" | "plaintext" | "txt" => "Text only",
        "coq" => "Coq",
        "lean" => "Lean",
        "scheme" | "scm" => "Scheme",
        "lisp" | "common-lisp" | "cl" => "Common Lisp",
        "emacs-lisp" | "elisp" | "emacs" => "EmacsLisp",
        "verilog" | "v" => "verilog",
        "vhdl" => "vhdl",
        "asm" | "nasm" => "NASM",
        "fortran" | "f90" => "Fortran",
        "d" => "D",
        "nim" | "nimrod" => "Nimrod",
        "crystal" | "cr" => "Crystal",
        "terraform" | "tf" | "hcl" => "Terraform",
        "jinja" | "django" => "Django/Jinja",
        "handlebars" => "Handlebars",
        "http" => "HTTP",
        "csv" => "CSV",
        _ => return None,
    };
    Some(name)
}

/// Renders a code block as Zulip does (without syntax highlighting): `lang` is the language
/// given after the fence, if any; trailing whitespace of each line is dropped.
pub(crate) fn code_block(lang: Option<&str>, text: &str) -> String {
    let mut lines: Vec<&str> = text.split('\n').map(str::trim_end).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    while lines.first().is_some_and(|l| l.is_empty()) {
        lines.remove(0);
    }
    let body = lines.join("\n");
    let mut out = String::from("<div class=\"codehilite\"");
    if let Some(lang) = lang.map(str::to_lowercase).filter(|l| !l.is_empty()) {
        let display = language_display_name(&lang).map_or(lang.clone(), str::to_owned);
        out.push_str(" data-code-language=\"");
        out.push_str(&escape::attr(&display));
        out.push('"');
    }
    out.push_str("><pre><span></span><code>");
    out.push_str(&escape::code(&body));
    out.push_str("\n</code></pre></div>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_language_and_escapes() {
        assert_eq!(
            code_block(Some("py2"), "print('<a>')  \n\n"),
            "<div class=\"codehilite\" data-code-language=\"Python 2.x\"><pre><span></span>\
             <code>print(&#39;&lt;a&gt;&#39;)\n</code></pre></div>"
        );
    }

    #[test]
    fn unknown_language_is_kept() {
        assert!(code_block(Some("Foo"), "x").contains("data-code-language=\"foo\""));
        assert!(!code_block(None, "x").contains("data-code-language"));
    }
}
