use super::*;

fn values(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (i as f64).sqrt() * 1e-300 + i as f64)
        .collect()
}

#[test]
fn disk_reads_back_what_memory_holds() {
    let x = values(3 * 70_000);
    let mut memory = PointStore::Memory(Vec::new());
    memory.append(&x).expect("memory");
    let mut disk = memory.clone();
    disk.move_to_disk(&std::env::temp_dir()).expect("temp dir");
    assert_eq!(disk.memory_bytes(), 0);
    assert_eq!(disk.len(), x.len());
    let ids: Vec<u32> = [5u32, 6, 7, 69_999, 0, 1, 12].to_vec();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    memory.gather(&ids, 3, &mut a);
    disk.gather(&ids, 3, &mut b);
    assert_eq!(a, b);
    disk.take_read_error().expect("no failed read");
    let mut all = Vec::new();
    disk.for_each_block(|block| {
        all.extend_from_slice(block);
        Ok(())
    })
    .expect("read");
    assert_eq!(all, x);
    assert_eq!(disk.clone().as_slice(), Some(x.as_slice()));
}

#[test]
fn appends_and_truncation_on_disk() {
    let mut disk = PointStore::default();
    disk.move_to_disk(&std::env::temp_dir()).expect("temp dir");
    disk.append(&[1.0, 2.0, 3.0, 4.0]).expect("write");
    disk.truncate(2).expect("shorten");
    disk.append(&[5.0, 6.0]).expect("write");
    let mut out = Vec::new();
    disk.gather(&[1, 0], 2, &mut out);
    assert_eq!(out, vec![5.0, 6.0, 1.0, 2.0]);
    // A row beyond the store is NaN and a reported error, not a panic.
    out.clear();
    disk.gather(&[7], 2, &mut out);
    assert!(out.iter().all(|v| v.is_nan()));
    assert!(matches!(disk.take_read_error(), Err(Error::Corrupt(_))));
    disk.take_read_error().expect("reported once");
}

#[test]
fn a_missing_directory_is_named() {
    let mut store = PointStore::default();
    let err = store
        .move_to_disk(Path::new("/nonexistent/mondrian"))
        .expect_err("no directory");
    assert!(err.to_string().contains("point_store"), "{err}");
    assert!(store.as_slice().is_some());
}

#[test]
fn serialised_as_its_values() {
    let x = values(1000);
    let mut disk = PointStore::Memory(x.clone());
    disk.move_to_disk(&std::env::temp_dir()).expect("temp dir");
    let bytes = postcard::to_stdvec(&disk).expect("serialise");
    assert_eq!(bytes, postcard::to_stdvec(&x).expect("serialise"));
    let back: PointStore = postcard::from_bytes(&bytes).expect("read");
    assert_eq!(back.as_slice(), Some(x.as_slice()));
}
