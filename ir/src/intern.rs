//! Hash-consing storage: every distinct value is stored once and named by a
//! dense `u32`, so types, attributes and locations compare and copy as integers.

use hashbrown::HashTable;
use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};

pub(crate) struct Interner<T> {
    items: Vec<T>,
    /// (hash, id): the hash is kept so growing the table never rehashes an
    /// item (a large array or dictionary attribute costs its size to hash),
    /// and a probe compares hashes before items.
    table: HashTable<(u64, u32)>,
}

fn hash_of<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut h = FxHasher::default();
    value.hash(&mut h);
    h.finish()
}

impl<T: Hash + Eq> Interner<T> {
    pub(crate) fn new() -> Self {
        Interner {
            items: Vec::new(),
            table: HashTable::new(),
        }
    }

    pub(crate) fn intern(&mut self, value: T) -> u32 {
        let hash = hash_of(&value);
        let items = &self.items;
        if let Some(&(_, id)) = self
            .table
            .find(hash, |&(h, id)| h == hash && items[id as usize] == value)
        {
            return id;
        }
        let id = self.items.len() as u32;
        self.items.push(value);
        self.table.insert_unique(hash, (hash, id), |&(h, _)| h);
        id
    }

    pub(crate) fn get(&self, id: u32) -> &T {
        &self.items[id as usize]
    }

    /// Room for `additional` more items without growing.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.items.reserve(additional);
        self.table.reserve(additional, |&(h, _)| h);
    }
}

/// String interner for identifiers (op names, attribute names, file names).
pub(crate) struct StrInterner {
    items: Vec<Box<str>>,
    table: HashTable<u32>,
}

impl StrInterner {
    pub(crate) fn new() -> Self {
        StrInterner {
            items: Vec::new(),
            table: HashTable::new(),
        }
    }

    pub(crate) fn intern(&mut self, s: &str) -> u32 {
        let hash = hash_of(s);
        let items = &self.items;
        if let Some(&id) = self.table.find(hash, |&id| &*items[id as usize] == s) {
            return id;
        }
        let id = self.items.len() as u32;
        self.items.push(s.into());
        let items = &self.items;
        self.table
            .insert_unique(hash, id, |&id| hash_of(&*items[id as usize]));
        id
    }

    pub(crate) fn lookup(&self, s: &str) -> Option<u32> {
        let items = &self.items;
        self.table
            .find(hash_of(s), |&id| &*items[id as usize] == s)
            .copied()
    }

    pub(crate) fn get(&self, id: u32) -> &str {
        &self.items[id as usize]
    }
}
