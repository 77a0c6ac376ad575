//! The request and response conventions: envelopes, unknown routes and methods, parameter errors,
//! and bad bodies that must never produce a 500.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_tests::backend_test;
use serde_json::json;

backend_test! {
    async fn unknown_routes_and_methods_get_json_envelopes(app) {
        let response = app.get("/no/such/endpoint").send().await;
        assert_eq!(response.status, 404);
        assert_eq!(response.json["result"], "error");
        let response = app.delete("/server_settings").send().await;
        assert_eq!(response.status, 405);
        assert_eq!(response.json["result"], "error");
        assert_eq!(response.json["allowed_methods"], json!(["GET"]));
        assert_eq!(response.headers.get("allow").unwrap(), "GET");
        let response = app.request(actix_web::http::Method::PUT, "/users").send().await;
        assert_eq!(response.status, 405);
        assert_eq!(response.json["allowed_methods"], json!(["GET", "POST"]));
    }
}

backend_test! {
    async fn unknown_parameters_are_reported(app) {
        let body = app.get("/users/me").as_user(&app.owner).param("colour", "red").param("size", "2")
            .send().await.success();
        assert_eq!(body["ignored_parameters_unsupported"], json!(["colour", "size"]));
        let body = app.get("/users/me").as_user(&app.owner).send().await.success();
        assert!(body.get("ignored_parameters_unsupported").is_none());
    }
}

backend_test! {
    async fn wrong_types_name_the_parameter(app) {
        for (name, value) in [("client_gravatar", "yes"), ("include_custom_profile_fields", "1"), ("user_ids", "[\"a\"]")] {
            let body = app.get("/users").as_user(&app.owner).param(name, value).send().await.error(400, "BAD_REQUEST");
            assert_eq!(body["var_name"], name);
            assert!(body["msg"].as_str().unwrap().contains(name), "{body}");
        }
    }
}

backend_test! {
    async fn malformed_bodies_are_4xx_never_500(app) {
        let owner = app.owner.clone();
        let bad_utf8 = app.post("/users").as_user(&owner)
            .raw_body(b"email=%ff%fe&password=x".to_vec(), "application/x-www-form-urlencoded")
            .send().await;
        assert_eq!(bad_utf8.status, 400, "{}", bad_utf8.text);
        assert_eq!(bad_utf8.json["result"], "error");

        let raw_bad_utf8 = app.post("/fetch_api_key")
            .raw_body(vec![b'u', b'=', 0xff, 0xfe], "application/x-www-form-urlencoded").send().await;
        assert_eq!(raw_bad_utf8.status, 400);

        let json_body = app.post("/fetch_api_key")
            .raw_body(br#"{"username":"a"}"#.to_vec(), "application/json").send().await;
        assert_eq!(json_body.status, 400);
        assert_eq!(json_body.json["var_name"], "Content-Type");

        let huge = vec![b'a'; 5 * 1024 * 1024];
        let oversize = app.post("/fetch_api_key").raw_body(huge, "application/x-www-form-urlencoded").send().await;
        assert_eq!(oversize.status, 413, "{}", oversize.text);
        assert_eq!(oversize.json["result"], "error");

        let nul = app.post("/fetch_api_key").param("username", "a\0b").param("password", "x").send().await;
        assert_eq!(nul.status, 400);
        assert_eq!(nul.json["var_name"], "username");

        let garbage = app.post("/users").as_user(&owner)
            .raw_body(b"&&==&%%%=%zz&email".to_vec(), "application/x-www-form-urlencoded").send().await;
        assert!((400..500).contains(&garbage.status), "{}", garbage.text);
    }
}

backend_test! {
    async fn every_response_is_an_envelope(app) {
        let owner = app.owner.clone();
        for response in [
            app.get("/server_settings").send().await,
            app.get("/users").send().await,
            app.get("/users").as_user(&owner).send().await,
            app.post("/users").as_user(&owner).send().await,
            app.get("/nowhere").send().await,
        ] {
            let result = response.json["result"].as_str().unwrap_or_default().to_owned();
            assert!(result == "success" || result == "error", "{}", response.text);
            assert!(response.json["msg"].is_string(), "{}", response.text);
        }
    }
}

backend_test! {
    async fn odd_paths_get_envelopes(app) {
        let owner = app.owner.clone();
        for path in ["/users/%ff%fe", "/users/%2e%2e", "/users/-1", "/users/me/", "/users//x", "/users/a%00b"] {
            let response = app.get(path).as_user(&owner).send().await;
            assert!((400..500).contains(&response.status), "{path}: {} {}", response.status, response.text);
            assert_eq!(response.json["result"], "error", "{path}: {}", response.text);
        }
        let response = app.get("/users/me").basic_auth("a\0b@parley.test", "key").send().await;
        assert_eq!(response.status, 401, "{}", response.text);
    }
}

backend_test! {
    async fn multipart_bodies_carry_parameters_like_forms(app) {
        use parley_domain::Role;
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let channel = app.create_channel(&ann, "dev", &[&ann], &[]).await;
        let queue = app.post("/register").as_user(&ann).json_param("event_types", &json!(["message", "reaction", "typing"]))
            .multipart().send().await.success();
        let queue_id = queue["queue_id"].as_str().unwrap().to_owned();
        let sent = app.post("/messages").as_user(&ann).param("type", "stream").param("to", "dev")
            .param("topic", "multi").param("content", "hi **there** ✓").multipart().send().await.success();
        let id = sent["id"].as_i64().unwrap();
        let message = app.get(&format!("/messages/{id}")).as_user(&ann).send().await.success();
        assert_eq!(message["message"]["content"], "<p>hi <strong>there</strong> ✓</p>");
        assert_eq!(message["message"]["subject"], "multi");
        app.post(&format!("/messages/{id}/reactions")).as_user(&ann).param("emoji_name", "octopus")
            .multipart().send().await.success();
        app.post("/messages/flags").as_user(&ann).json_param("messages", &json!([id])).param("op", "add")
            .param("flag", "starred").multipart().send().await.success();
        let message = app.get(&format!("/messages/{id}")).as_user(&ann).send().await.success();
        assert!(message["message"]["flags"].as_array().unwrap().contains(&json!("starred")), "{message}");
        assert_eq!(message["message"]["reactions"][0]["emoji_name"], "octopus");
        app.post("/typing").as_user(&ann).param("type", "stream").param("stream_id", channel)
            .param("topic", "multi").param("op", "start").multipart().send().await.success();
        let events = app.events(&ann, &queue_id, -1).await;
        let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        for kind in ["message", "reaction"] {
            assert!(kinds.contains(&kind), "{kinds:?}");
        }
        app.patch("/settings").as_user(&ann).param("full_name", "Ann Multipart").multipart().send().await.success();
        let me = app.get("/users/me").as_user(&ann).send().await.success();
        assert_eq!(me["full_name"], "Ann Multipart");

        // The same errors as a form body, naming the same parameters.
        let cases: [&[(&str, &str)]; 3] = [
            &[("type", "stream"), ("to", "dev"), ("content", "x")],
            &[("type", "stream"), ("to", "dev"), ("topic", "t"), ("content", "a\0b")],
            &[("type", "stream"), ("to", "dev"), ("topic", "t")],
        ];
        for params in cases {
            let form = params.iter().fold(app.post("/messages").as_user(&ann), |r, (k, v)| r.param(k, v));
            let multi = params.iter().fold(app.post("/messages").as_user(&ann), |r, (k, v)| r.param(k, v));
            let (form, multi) = (form.send().await, multi.multipart().send().await);
            assert_eq!(form.status, 400, "{}", form.text);
            assert_eq!((multi.status, &multi.json), (form.status, &form.json), "{params:?}");
        }
        let body = app.post("/messages/flags").as_user(&ann).json_param("messages", &json!([id])).param("op", "add")
            .param("flag", "read").param("colour", "red").multipart().send().await.success();
        assert_eq!(body["ignored_parameters_unsupported"], json!(["colour"]));
    }
}

backend_test! {
    async fn bad_multipart_bodies_are_4xx_never_500(app) {
        let owner = app.owner.clone();
        let boundary = "multipart/form-data; boundary=b1";
        let bad_utf8 = [&b"--b1\r\nContent-Disposition: form-data; name=\"full_name\"\r\n\r\n"[..], &[0xff, 0xfe], b"\r\n--b1--\r\n"].concat();
        let response = app.patch("/settings").as_user(&owner).raw_body(bad_utf8, boundary).send().await;
        assert_eq!(response.status, 400, "{}", response.text);
        for (body, content_type) in [
            (b"not multipart at all".to_vec(), boundary),
            (b"--b1\r\nContent-Disposition: form-data; name=\"full_name\"\r\n\r\nunterminated".to_vec(), boundary),
            (b"--b1--\r\n".to_vec(), "multipart/form-data"),
        ] {
            let response = app.patch("/settings").as_user(&owner).raw_body(body, content_type).send().await;
            assert!((400..500).contains(&response.status), "{content_type}: {} {}", response.status, response.text);
            assert_eq!(response.json["result"], "error");
        }
        let mut huge = b"--b1\r\nContent-Disposition: form-data; name=\"full_name\"\r\n\r\n".to_vec();
        huge.extend(vec![b'a'; 5 * 1024 * 1024]);
        huge.extend_from_slice(b"\r\n--b1--\r\n");
        let response = app.patch("/settings").as_user(&owner).raw_body(huge, boundary).send().await;
        assert_eq!(response.status, 413, "{}", response.text);
        // A file part is not a parameter.
        let file = b"--b1\r\nContent-Disposition: form-data; name=\"full_name\"; filename=\"x.txt\"\r\n\r\nFile Name\r\n--b1--\r\n".to_vec();
        app.patch("/settings").as_user(&owner).raw_body(file, boundary).send().await.success();
        let me = app.get("/users/me").as_user(&owner).send().await.success();
        assert_ne!(me["full_name"], "File Name");
    }
}

backend_test! {
    async fn nul_in_any_path_is_a_400_envelope(app) {
        let owner = app.owner.clone();
        // Each of these reached a text column with the NUL (a 500 on PostgreSQL).
        let pages = [
            ("GET", "/join/a%00b/"),
            ("POST", "/join/a%00b/"),
            ("GET", "/accounts/confirm_new_email/a%00b"),
            ("GET", "/user_avatars/1/emoji/images/a%00b"),
            ("GET", "/user_uploads/1/a%00b"),
            ("GET", "/api/v1/user_uploads/1/a%00b"),
            ("DELETE", "/api/v1/realm/emoji/a%00b"),
            ("GET", "/api/v1/users/%00"),
        ];
        for (method, path) in pages {
            let request = app.page(method.parse().unwrap(), path);
            let body = request.as_user(&owner).send().await.error(400, "BAD_REQUEST");
            assert!(body["msg"].as_str().unwrap().contains("NULL"), "{method} {path}: {body}");
        }
        // An encoded percent sign followed by 00 is no NUL.
        let response = app.get_page("/join/a%2500b/").send().await;
        assert_ne!(response.status, 500, "{}", response.text);
        assert!(!response.text.contains("NULL"), "{}", response.text);
    }
}

/// Sends raw bytes to a real socket and reads the whole answer.
async fn raw_exchange(addr: std::net::SocketAddr, request: Vec<u8>) -> (String, serde_json::Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    // The server may answer and close before it has read everything.
    let _ = stream.write_all(&request).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut answer),
    )
    .await;
    let text = String::from_utf8_lossy(&answer).into_owned();
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .unwrap_or_default();
    (
        text.clone(),
        serde_json::from_str(body).unwrap_or(serde_json::Value::Null),
    )
}

backend_test! {
    async fn requests_the_http_parser_refuses_get_envelopes_too(app) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = parley_api::h1::serve(app.ctx.clone(), Default::default(), listener, std::time::Duration::from_secs(1)).unwrap();
        let handle = server.handle();
        actix_web::rt::spawn(server);

        let (text, body) = raw_exchange(addr, b"GET /api/v1/server_settings HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".to_vec()).await;
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert_eq!(body["result"], "success", "{text}");

        let mut bad_line = b"GET /api/v1/server_settings HTTP/1.1\r\n".to_vec();
        bad_line[5] = 0x01;
        bad_line.extend_from_slice(b"Host: x\r\n\r\n");
        let mut bad_header = b"GET / HTTP/1.1\r\nHo\x7fst: x\r\n\r\n".to_vec();
        bad_header.shrink_to_fit();
        let many_headers = format!("GET / HTTP/1.1\r\n{}\r\n", (0..200).map(|i| format!("x-h{i}: v\r\n")).collect::<String>());
        let huge_header = format!("GET / HTTP/1.1\r\nx-big: {}\r\n\r\n", "a".repeat(200 * 1024));
        for (request, status) in [
            (bad_line, 400),
            (bad_header, 400),
            (many_headers.into_bytes(), 431),
            (huge_header.into_bytes(), 431),
        ] {
            let (text, body) = raw_exchange(addr, request).await;
            assert!(text.starts_with(&format!("HTTP/1.1 {status} ")), "{text}");
            assert!(text.to_ascii_lowercase().contains("content-type: application/json"), "{text}");
            assert_eq!(body["result"], "error", "{text}");
            assert_eq!(body["code"], "BAD_REQUEST", "{text}");
            assert!(body["msg"].as_str().is_some_and(|m| !m.is_empty()), "{text}");
        }
        handle.stop(false).await;
    }
}
