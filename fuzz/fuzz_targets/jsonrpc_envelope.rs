//! JSON-RPC envelope, differential: `Message::parse` (a typed fast path for well-formed messages,
//! falling back to the general path) must give exactly what the general path (a
//! `serde_json::Value`, then `Message::from_value`) gives, on every input, errors included. A
//! parsed message must also survive its own serialisation, and every parse error must map to a
//! JSON-RPC error that is itself a valid message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcp_proto::{Message, ParseError, jsonrpc};

fuzz_target!(|data: &[u8]| {
    let fast = Message::parse(data);
    let general = serde_json::from_slice::<serde_json::Value>(data)
        .map_err(|e| ParseError::Json(e.to_string()))
        .and_then(Message::from_value);
    assert_eq!(
        fast,
        general,
        "fast and general paths disagree on {:?}",
        String::from_utf8_lossy(data)
    );
    match &fast {
        Ok(message) => {
            let again = Message::parse(&message.to_bytes());
            assert_eq!(
                again.as_ref(),
                Ok(message),
                "does not survive serialisation"
            );
            if let Message::Request { id, method, params } = message {
                let bytes = jsonrpc::request_bytes(id, method, params.as_ref());
                assert_eq!(Message::parse(&bytes).as_ref(), Ok(message));
            }
        }
        Err(e) => {
            let (id, error) = e.to_error();
            let answer = Message::parse(&jsonrpc::error_bytes(&id, &error));
            assert!(
                matches!(answer, Ok(Message::Error { id: ref got, .. }) if *got == id),
                "the error answer is not a valid message: {answer:?}"
            );
        }
    }
});
