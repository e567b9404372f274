//! The stream's object store: records too large for one message travel as objects, read
//! back with a bound on what one message can make a follower read.

use async_nats::jetstream::object_store;
use tokio::io::AsyncReadExt as _;

use crate::client::Fleet;
use crate::error::FleetError;

impl Fleet {
    fn bucket(&self) -> String {
        format!("{}-records", self.options().stream)
    }

    /// Puts a record's JSON, too large for one message, into the stream's object store.
    pub(crate) async fn put_object(&self, name: &str, json: &[u8]) -> Result<(), FleetError> {
        let bucket = self.bucket();
        let store = match self.js.get_object_store(&bucket).await {
            Ok(store) => store,
            Err(_) => self
                .js
                .create_object_store(object_store::Config {
                    bucket: bucket.clone(),
                    num_replicas: self.stream.cached_info().config.num_replicas,
                    ..Default::default()
                })
                .await
                .map_err(|err| self.stream_error(format!("object store {bucket:?}: {err}")))?,
        };
        let mut reader = json;
        store
            .put(name, &mut reader)
            .await
            .map_err(|err| self.stream_error(format!("object {name:?}: {err}")))?;
        Ok(())
    }

    /// Reads an object of the stream's object store, at most `size_bytes_max` bytes. The
    /// error says whether the object will never be readable (missing or too large).
    pub(crate) async fn get_object(
        &self,
        name: &str,
        size_bytes_max: usize,
    ) -> Result<Vec<u8>, (bool, String)> {
        let bucket = self.bucket();
        let store = self
            .js
            .get_object_store(&bucket)
            .await
            .map_err(|err| (false, format!("object store {bucket:?}: {err}")))?;
        let object = store.get(name).await.map_err(|err| {
            let gone = err.kind() == object_store::GetErrorKind::NotFound;
            (gone, format!("object {name:?}: {err}"))
        })?;
        // Refused on its metadata before a chunk is read; the read below is bounded too, for
        // metadata that understates it.
        if object.info.size > size_bytes_max {
            let size = object.info.size;
            return Err((
                true,
                format!("object {name:?} is {size} bytes, over the limit of {size_bytes_max}"),
            ));
        }
        let mut out = Vec::new();
        let read = object.take(size_bytes_max as u64 + 1).read_to_end(&mut out).await;
        read.map_err(|err| (false, format!("object {name:?}: {err}")))?;
        if out.len() > size_bytes_max {
            return Err((true, format!("object {name:?} is over {size_bytes_max} bytes")));
        }
        Ok(out)
    }
}
