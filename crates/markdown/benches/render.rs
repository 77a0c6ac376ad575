//! Renders a realistic 10,000-character message many times and prints the mean and 99th
//! percentile time per render; then messages with math: the first formula (which loads KaTeX),
//! new formulas, and formulas seen before (cached). Run with `cargo bench -p parley-markdown`.

use std::time::{Duration, Instant};

use parley_markdown::{
    render_message, Linkifier, Lookup, MentionChannel, MentionGroup, MentionUser, RealmEmoji,
};

struct Realm {
    linkifiers: Vec<Linkifier>,
}

impl Lookup for Realm {
    fn users_by_name(&self, full_name: &str) -> Vec<MentionUser> {
        ["King Hamlet", "Cordelia, Lear's daughter", "Iago"]
            .iter()
            .position(|n| *n == full_name)
            .map(|i| MentionUser {
                id: 10 + i as i64,
                full_name: full_name.to_owned(),
            })
            .into_iter()
            .collect()
    }
    fn user_by_id(&self, id: i64) -> Option<MentionUser> {
        (id == 10).then(|| MentionUser {
            id,
            full_name: "King Hamlet".to_owned(),
        })
    }
    fn group_by_name(&self, name: &str) -> Option<MentionGroup> {
        (name == "support").then(|| MentionGroup {
            id: 3,
            name: name.to_owned(),
        })
    }
    fn channel_by_name(&self, name: &str) -> Option<MentionChannel> {
        (name == "Denmark").then(|| MentionChannel {
            id: 1,
            name: name.to_owned(),
        })
    }
    fn realm_emoji(&self, name: &str) -> Option<RealmEmoji> {
        (name == "parrot").then(|| RealmEmoji {
            id: "7".to_owned(),
            name: name.to_owned(),
            url: "/user_avatars/2/emoji/images/7.gif".to_owned(),
        })
    }
    fn linkifiers(&self) -> &[Linkifier] {
        &self.linkifiers
    }
}

/// A message of about 10,000 characters mixing the flavour's features.
fn message() -> String {
    let chunk = "Hello @**King Hamlet** and @_**Iago**, the deploy in #**Denmark>releases** \
went fine :tada: :smile: 🎉 — see https://example.com/deploys/1234?tab=logs and \
[the runbook](https://wiki.example.com/runbook) for details. Ticket #4321 tracks the \
follow-up; ping @*support* if **anything** looks *odd* or ~~broken~~.\n\n\
* check `cargo test --workspace` passes\n* restart the `worker` pool\n  * one at a time\n\n\
```rust\nfn main() {\n    println!(\"hello, {}\", 42);\n}\n```\n\n\
> quoted reply with :parrot: and <time:2024-05-01T14:00:00Z>\n\n";
    let mut text = String::new();
    while text.len() < 10_000 {
        text.push_str(chunk);
    }
    text.truncate(text.floor_char_boundary_compat(10_000));
    text
}

trait FloorBoundary {
    fn floor_char_boundary_compat(&self, at: usize) -> usize;
}

impl FloorBoundary for String {
    fn floor_char_boundary_compat(&self, at: usize) -> usize {
        (0..=at.min(self.len()))
            .rev()
            .find(|&i| self.is_char_boundary(i))
            .unwrap_or(0)
    }
}

/// Mean and 99th percentile of `runs` calls of `f` (given the run's number).
fn measure(runs: usize, mut f: impl FnMut(usize)) -> (Duration, Duration) {
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    for i in 0..runs {
        let start = Instant::now();
        f(i);
        times.push(start.elapsed());
    }
    times.sort();
    let total: Duration = times.iter().sum();
    (total / runs as u32, times[(runs * 99 / 100).min(runs - 1)])
}

/// A short message with one inline formula and one display block, different for each `i`.
fn math_message(i: usize) -> String {
    format!(
        "The roots are $$x_{i} = \\frac{{-b \\pm \\sqrt{{b^2 - 4ac}}}}{{2a}}$$, as before.\n\n\
         ```math\n\\sum_{{k=0}}^{{{i}}} k = \\frac{{{i}({i}+1)}}{{2}}\n```"
    )
}

fn math(realm: &Realm) {
    let start = Instant::now();
    std::hint::black_box(render_message("$$x$$", realm));
    println!("first formula (starts KaTeX): {:?}", start.elapsed());
    let runs = 200;
    let (mean, p99) = measure(runs, |i| {
        std::hint::black_box(render_message(&math_message(i), realm));
    });
    println!("message with 2 new formulas: mean {mean:?}, p99 {p99:?} over {runs} runs");
    let (mean, p99) = measure(runs, |i| {
        std::hint::black_box(render_message(&math_message(i), realm));
    });
    println!("the same messages again (cached): mean {mean:?}, p99 {p99:?} over {runs} runs");
}

fn main() {
    let realm = Realm {
        linkifiers: vec![Linkifier {
            id: 1,
            pattern: "#(?P<id>[0-9]{2,8})".to_owned(),
            url_template: "https://tracker.example.com/ticket/{id}".to_owned(),
        }],
    };
    let text = message();
    // Warm up (emoji tables, regex cache).
    for _ in 0..20 {
        std::hint::black_box(render_message(&text, &realm));
    }
    let runs = 500;
    let (mean, p99) = measure(runs, |_| {
        std::hint::black_box(render_message(std::hint::black_box(&text), &realm));
    });
    let html_len = render_message(&text, &realm).html.len();
    println!(
        "render {} chars -> {} bytes of HTML: mean {:?}, p99 {:?} over {runs} runs",
        text.chars().count(),
        html_len,
        mean,
        p99
    );
    math(&realm);
}
