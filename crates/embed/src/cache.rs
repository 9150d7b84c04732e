//! Vectors remembered by content hash: a catalog change re-embeds only the tools whose text
//! changed, every catalog version and identity view shares one copy, and with a cache file a
//! restart reuses them. Query texts are never cached (they are unbounded and caller-chosen).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::{EmbedError, Embedder};

/// Cached vectors at most (about 150 MB at 384 dimensions); beyond, vectors are computed and
/// used but not kept.
const MAX_ENTRIES: usize = 100_000;
const MAGIC: &[u8; 8] = b"VMCPEMB1";

type Key = [u8; 32];

/// An embedder with a content-addressed cache in front.
#[derive(Debug)]
pub struct EmbeddingCache {
    embedder: Arc<dyn Embedder>,
    vectors: RwLock<HashMap<Key, Arc<[f32]>>>,
    /// The model's dimension once known (0 before): a vector of another size is refused.
    dimension: AtomicUsize,
    file: Option<PathBuf>,
    /// Serialises appends to the file.
    writing: Mutex<()>,
}

impl EmbeddingCache {
    /// A cache in front of `embedder`; with `file`, vectors stored there for this model are
    /// loaded now and new ones appended. An unreadable or foreign file is started afresh.
    #[must_use]
    pub fn new(embedder: Arc<dyn Embedder>, file: Option<&Path>) -> Self {
        let cache = Self {
            embedder,
            vectors: RwLock::new(HashMap::new()),
            dimension: AtomicUsize::new(0),
            file: file.map(Path::to_path_buf),
            writing: Mutex::new(()),
        };
        if let Some(path) = file {
            cache.load(path);
        }
        cache
    }

    /// The embedder behind the cache.
    #[must_use]
    pub fn model_id(&self) -> &str {
        self.embedder.model_id()
    }

    /// How many vectors are cached.
    #[must_use]
    pub fn len(&self) -> usize {
        self.vectors.read().map_or(0, |v| v.len())
    }

    /// Whether the cache holds nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn key(&self, text: &str) -> Key {
        let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
        ctx.update(self.embedder.model_id().as_bytes());
        ctx.update(&[0]);
        ctx.update(text.as_bytes());
        let mut key = [0; 32];
        key.copy_from_slice(ctx.finish().as_ref());
        key
    }

    /// Vectors for `texts`, embedding only those not cached.
    ///
    /// # Errors
    /// The embedder's failure, or vectors of a dimension other than the model's.
    pub async fn vectors(&self, texts: &[String]) -> Result<Vec<Arc<[f32]>>, EmbedError> {
        let keys: Vec<Key> = texts.iter().map(|t| self.key(t)).collect();
        let mut out: Vec<Option<Arc<[f32]>>> = {
            let map = self.vectors.read().map_err(poisoned)?;
            keys.iter().map(|k| map.get(k).cloned()).collect()
        };
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| out[i].is_none()).collect();
        if !missing.is_empty() {
            let inputs: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
            let fresh = self.embedder.embed(&inputs).await?;
            if fresh.len() != inputs.len() {
                return Err(EmbedError::Service(format!(
                    "{} vectors for {} inputs",
                    fresh.len(),
                    inputs.len()
                )));
            }
            let mut added = Vec::new();
            {
                let mut map = self.vectors.write().map_err(poisoned)?;
                for (&i, v) in missing.iter().zip(fresh) {
                    self.check_dimension(v.len())?;
                    let v: Arc<[f32]> = v.into();
                    if map.len() < MAX_ENTRIES {
                        map.insert(keys[i], v.clone());
                        added.push((keys[i], v.clone()));
                    }
                    out[i] = Some(v);
                }
            }
            self.append(&added);
        }
        Ok(out.into_iter().flatten().collect())
    }

    /// The vector for a query (not cached).
    ///
    /// # Errors
    /// As [`Self::vectors`].
    pub async fn query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut v = self.embedder.embed(&[text.to_owned()]).await?;
        let v = v
            .pop()
            .ok_or_else(|| EmbedError::Service("no vector for the query".into()))?;
        self.check_dimension(v.len())?;
        Ok(v)
    }

    fn check_dimension(&self, got: usize) -> Result<(), EmbedError> {
        if got == 0 {
            return Err(EmbedError::Service("an empty vector".into()));
        }
        match self
            .dimension
            .compare_exchange(0, got, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Ok(()),
            Err(known) if known == got => Ok(()),
            Err(known) => Err(EmbedError::Service(format!(
                "returned vectors of {got} dimensions, expected {known}"
            ))),
        }
    }

    fn load(&self, path: &Path) {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "embedding cache file unreadable; starting afresh");
                return;
            }
        };
        let Some((dim, records)) = parse_header(&bytes, self.embedder.model_id()) else {
            tracing::warn!(path = %path.display(), "embedding cache file is for another model or damaged; starting afresh");
            let _ = std::fs::remove_file(path);
            return;
        };
        let width = 32 + dim * 4;
        let mut map = match self.vectors.write() {
            Ok(m) => m,
            Err(_) => return,
        };
        // A record cut short by a crash is ignored.
        for rec in records.chunks_exact(width).take(MAX_ENTRIES) {
            let mut key = [0; 32];
            key.copy_from_slice(&rec[..32]);
            let v: Vec<f32> = rec[32..]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            map.insert(key, v.into());
        }
        self.dimension.store(dim, Ordering::Release);
        tracing::info!(path = %path.display(), vectors = map.len(), "embedding cache loaded");
    }

    fn append(&self, added: &[(Key, Arc<[f32]>)]) {
        let (Some(path), Some(first)) = (&self.file, added.first()) else {
            return;
        };
        let Ok(_guard) = self.writing.lock() else {
            return;
        };
        let dim = first.1.len();
        let mut buf = Vec::new();
        let fresh = std::fs::metadata(path).map_or(true, |m| m.len() == 0);
        if fresh {
            buf.extend_from_slice(MAGIC);
            let id = self.embedder.model_id().as_bytes();
            buf.extend_from_slice(&(id.len() as u32).to_le_bytes());
            buf.extend_from_slice(id);
            buf.extend_from_slice(&(dim as u32).to_le_bytes());
        }
        for (k, v) in added {
            buf.extend_from_slice(k);
            v.iter()
                .for_each(|x| buf.extend_from_slice(&x.to_le_bytes()));
        }
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(&buf));
        if let Err(e) = written {
            tracing::warn!(path = %path.display(), error = %e, "embedding cache file not written");
        }
    }
}

/// The dimension and the records, when `bytes` is a cache file for `model`.
fn parse_header<'a>(bytes: &'a [u8], model: &str) -> Option<(usize, &'a [u8])> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let id_len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    let id = rest.get(4..4 + id_len)?;
    if id != model.as_bytes() {
        return None;
    }
    let rest = &rest[4 + id_len..];
    let dim = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    (dim > 0).then_some((dim, &rest[4..]))
}

fn poisoned<T>(_: T) -> EmbedError {
    EmbedError::Service("embedding cache lock poisoned".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::future::BoxFuture;
    use std::sync::atomic::AtomicUsize;

    /// Embeds a text as [len, 1, ...] and counts the texts it was asked for.
    #[derive(Debug, Default)]
    struct Counting {
        calls: AtomicUsize,
        dim: usize,
    }

    impl Embedder for Counting {
        fn model_id(&self) -> &str {
            "counting"
        }
        fn embed<'a>(
            &'a self,
            texts: &'a [String],
        ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
            self.calls.fetch_add(texts.len(), Ordering::SeqCst);
            let dim = self.dim;
            Box::pin(async move {
                Ok(texts
                    .iter()
                    .map(|t| {
                        let mut v = vec![1.0; dim];
                        v[0] = t.len() as f32;
                        v
                    })
                    .collect())
            })
        }
    }

    fn texts(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| (*s).to_owned()).collect()
    }

    #[tokio::test]
    async fn embeds_each_text_once_and_survives_a_restart() {
        let dir = std::env::temp_dir().join(format!("vmcp-embcache-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let model = Arc::new(Counting {
            dim: 3,
            ..Default::default()
        });
        let cache = EmbeddingCache::new(model.clone(), Some(&dir));
        let v = cache.vectors(&texts(&["a", "bb"])).await.unwrap();
        assert_eq!(&*v[1], &[2.0, 1.0, 1.0]);
        cache.vectors(&texts(&["bb", "ccc"])).await.unwrap();
        assert_eq!(model.calls.load(Ordering::SeqCst), 3, "bb was cached");
        cache.query("bb").await.unwrap();
        assert_eq!(
            model.calls.load(Ordering::SeqCst),
            4,
            "queries are never cached"
        );

        let again = Arc::new(Counting {
            dim: 3,
            ..Default::default()
        });
        let restarted = EmbeddingCache::new(again.clone(), Some(&dir));
        assert_eq!(restarted.len(), 3);
        let v = restarted.vectors(&texts(&["ccc", "a"])).await.unwrap();
        assert_eq!(&*v[0], &[3.0, 1.0, 1.0]);
        assert_eq!(
            again.calls.load(Ordering::SeqCst),
            0,
            "loaded from the file"
        );
        let _ = std::fs::remove_file(&dir);
    }

    #[tokio::test]
    async fn refuses_a_change_of_dimension_and_damaged_files() {
        let path = std::env::temp_dir().join(format!("vmcp-embcache-bad-{}", std::process::id()));
        std::fs::write(&path, b"VMCPEMB1garbage").unwrap();
        let cache = EmbeddingCache::new(
            Arc::new(Counting {
                dim: 2,
                ..Default::default()
            }),
            Some(&path),
        );
        assert!(cache.is_empty());
        cache.vectors(&texts(&["x"])).await.unwrap();
        assert_eq!(cache.len(), 1, "a fresh file was started");
        cache.dimension.store(5, Ordering::SeqCst);
        let err = cache.query("y").await.unwrap_err();
        assert!(
            err.to_string().contains("2 dimensions, expected 5"),
            "{err}"
        );
        let _ = std::fs::remove_file(&path);
    }
}
