//! BigBlueButton calls: `GET /calls/bigbluebutton/create` without and with a configured server,
//! and the signed join link, which creates the meeting on a fake BigBlueButton server and
//! redirects to its checksummed join URL.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_actions::calls::BigBlueButtonConfig;
use parley_domain::Role;
use parley_tests::{backend_test, TestApp};
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

const SECRET: &str = "bbb-shared-secret";

/// A BigBlueButton server answering `api/create` with `answer`, recording each request line's
/// path and query.
fn fake_bbb(answer: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/bigbluebutton/", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            log.lock()
                .unwrap()
                .push(line.split_whitespace().nth(1).unwrap_or("").to_owned());
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                if header.trim().is_empty() {
                    break;
                }
            }
            let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}", answer.len());
        }
    });
    (url, seen)
}

fn checksum(call: &str, params: &str) -> String {
    Sha256::digest(format!("{call}{params}{SECRET}"))
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

async fn with_bbb(app: TestApp, url: &str) -> TestApp {
    let config = BigBlueButtonConfig {
        url: url.to_owned(),
        secret: SECRET.to_owned(),
    };
    app.reconfigured(|ctx| ctx.with_bigbluebutton(Some(config)))
        .await
}

const SUCCESS: &str = "<response><returncode>SUCCESS</returncode><meetingID>x</meetingID><createTime>1700000000000</createTime></response>";

backend_test! {
    async fn bigbluebutton_calls(app) {
        let body = app.get("/calls/bigbluebutton/create").as_user(&app.owner)
            .param("meeting_name", "standup").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "BigBlueButton is not configured.");
        let body = app.get("/calls/bigbluebutton/create").as_user(&app.owner)
            .send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "meeting_name");

        let (bbb, seen) = fake_bbb(SUCCESS);
        let app = with_bbb(app, &bbb).await;
        let body = app.get("/calls/bigbluebutton/create").as_user(&app.owner)
            .param("meeting_name", "design review").param("voice_only", "true").send().await.success();
        let url = body["url"].as_str().unwrap();
        let signed = url.strip_prefix("/calls/bigbluebutton/join?bigbluebutton=").expect(url).to_owned();

        // The creator joins as moderator.
        let response = app.get_page("/calls/bigbluebutton/join").as_user(&app.owner)
            .param("bigbluebutton", &signed).send().await;
        assert_eq!(response.status, 302, "{}", response.text);
        let location = response.headers.get("location").unwrap().to_str().unwrap().to_owned();
        let created = seen.lock().unwrap().remove(0);
        let (path, query) = created.split_once('?').unwrap();
        assert_eq!(path, "/bigbluebutton/api/create");
        let (params, sum) = query.rsplit_once("&checksum=").unwrap();
        assert!(params.starts_with("meetingID=zulip-"), "{params}");
        assert!(params.ends_with("&name=design%20review&lockSettingsDisableCam=True"), "{params}");
        assert_eq!(sum, checksum("create", params));
        let meeting_id = params.split('&').next().unwrap().trim_start_matches("meetingID=").to_owned();
        let join = format!("meetingID={meeting_id}&role=MODERATOR&fullName=Full%20Name&createTime=1700000000000");
        let (base, _) = location.split_once('?').unwrap();
        assert_eq!(base, format!("{bbb}api/join"));
        let (join_params, join_sum) = location.split_once('?').unwrap().1.rsplit_once("&checksum=").unwrap();
        assert_eq!(join_sum, checksum("join", join_params));
        assert!(join_params.starts_with(&format!("meetingID={meeting_id}&role=MODERATOR&fullName=")), "{join_params}");
        assert!(join_params.ends_with("&createTime=1700000000000"), "{join_params} vs {join}");

        // Others join as viewers, under their own name; visitors without an account as Guest.
        let ann = app.create_user("ann@parley.test", "Ann Lee", Role::Member).await;
        let response = app.get_page("/calls/bigbluebutton/join").as_user(&ann)
            .param("bigbluebutton", &signed).send().await;
        let location = response.headers.get("location").unwrap().to_str().unwrap().to_owned();
        assert!(location.contains("&role=VIEWER&fullName=Ann%20Lee&"), "{location}");
        let response = app.get_page("/calls/bigbluebutton/join").param("bigbluebutton", &signed).send().await;
        let location = response.headers.get("location").unwrap().to_str().unwrap().to_owned();
        assert!(location.contains("&role=VIEWER&fullName=Guest&"), "{location}");

        // Altered links are refused.
        let (data, tag) = signed.split_once(':').unwrap();
        let tampered = format!("{}A:{tag}", data);
        let response = app.get_page("/calls/bigbluebutton/join").as_user(&app.owner)
            .param("bigbluebutton", &tampered).send().await;
        assert_eq!(response.status, 400);
        assert_eq!(response.json["msg"], "Invalid signature.");

        // A server refusing the checksum.
        let (bad, _) = fake_bbb("<response><returncode>FAILED</returncode><messageKey>checksumError</messageKey></response>");
        let app = with_bbb(app, &bad).await;
        let response = app.get_page("/calls/bigbluebutton/join").as_user(&app.owner)
            .param("bigbluebutton", &signed).send().await;
        assert_eq!(response.json["msg"], "Error authenticating to the BigBlueButton server.");
        // Not voice only by default.
        let body = app.get("/calls/bigbluebutton/create").as_user(&ann)
            .param("meeting_name", "x").send().await.success();
        assert!(body["url"].as_str().unwrap().starts_with("/calls/bigbluebutton/join?bigbluebutton="));
    }
}
