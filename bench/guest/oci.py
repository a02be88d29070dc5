"""OCI image layout and runtime bundles, written with the standard library:
the bench builds its image locally (no registry), unpacks it with umoci and
runs containers with crun."""
import hashlib
import io
import json
import os
import tarfile

MEDIA_LAYER = "application/vnd.oci.image.layer.v1.tar"
MEDIA_CONFIG = "application/vnd.oci.image.config.v1+json"
MEDIA_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def _blob(layout, data):
    digest = hashlib.sha256(data).hexdigest()
    path = os.path.join(layout, "blobs", "sha256", digest)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return {"digest": f"sha256:{digest}", "size": len(data)}


def build_layout(layout, tag, members, cmd):
    """An OCI image layout at LAYOUT with one uncompressed layer holding
    MEMBERS, a list of (path in image, path on this machine or None for a
    directory, symlink target or None)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, src, link in members:
            if link is not None:
                ti = tarfile.TarInfo(name)
                ti.type, ti.linkname, ti.mode = tarfile.SYMTYPE, link, 0o777
                tar.addfile(ti)
            elif src is None:
                ti = tarfile.TarInfo(name)
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(ti)
            else:
                tar.add(src, arcname=name, recursive=False)
    layer = buf.getvalue()
    return _finish(layout, tag, _blob(layout, layer),
                   "sha256:" + hashlib.sha256(layer).hexdigest(), cmd)


def layout_from_layer(layout, tag, layer_path, cmd):
    """An OCI image layout at LAYOUT whose one uncompressed layer is the
    tarball LAYER_PATH (moved into the layout's blobs)."""
    h = hashlib.sha256()
    with open(layer_path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    path = os.path.join(layout, "blobs", "sha256", h.hexdigest())
    os.makedirs(os.path.dirname(path), exist_ok=True)
    size = os.path.getsize(layer_path)
    os.replace(layer_path, path)
    # uncompressed: the layer's digest is its diff_id
    return _finish(layout, tag, {"digest": f"sha256:{h.hexdigest()}", "size": size},
                   f"sha256:{h.hexdigest()}", cmd)


def _finish(layout, tag, layer_blob, diff_id, cmd):
    """Config, manifest and index of a one-layer image layout."""
    layer_desc = dict(layer_blob, mediaType=MEDIA_LAYER)
    config = {"architecture": "amd64", "os": "linux",
              "config": {"Env": ["PATH=/usr/bin:/bin"], "Cmd": cmd, "WorkingDir": "/"},
              "rootfs": {"type": "layers", "diff_ids": [diff_id]}}
    config_desc = dict(_blob(layout, json.dumps(config).encode()), mediaType=MEDIA_CONFIG)
    manifest = {"schemaVersion": 2, "mediaType": MEDIA_MANIFEST, "config": config_desc,
                "layers": [layer_desc]}
    man_desc = dict(_blob(layout, json.dumps(manifest).encode()), mediaType=MEDIA_MANIFEST,
                    annotations={"org.opencontainers.image.ref.name": tag})
    with open(os.path.join(layout, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    with open(os.path.join(layout, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [man_desc]}, f)
    return {"layer_bytes": layer_blob["size"], "manifest": man_desc["digest"]}


# The capabilities a container runtime grants by default (Docker's and
# Podman's set), for servers that start as root and drop to their user:
# umoci's config has only the rootless ones.
SERVER_CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
               "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
               "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"]


def bundle(path, base_config, rootfs, args, cgroup, binds=(), env=(), caps=None, user=None):
    """A runtime bundle at PATH: config.json from BASE_CONFIG (the one
    `umoci unpack` wrote) with root RootFS, process ARGS, cgroupsPath CGROUP
    and bind mounts BINDS (source, destination); CAPS: the process's
    capabilities instead of umoci's; USER: its (uid, gid) instead of root."""
    with open(base_config) as f:
        cfg = json.load(f)
    cfg["root"] = {"path": rootfs, "readonly": False}
    proc = cfg["process"]
    proc["args"], proc["terminal"], proc["cwd"] = list(args), False, "/"
    proc["env"] = [e for e in proc.get("env", []) if not e.startswith("TERM=")] + list(env)
    if user is not None:
        proc["user"] = {"uid": user[0], "gid": user[1]}
    if caps is not None:
        proc["capabilities"] = {k: list(caps) for k in ("bounding", "effective", "permitted")}
    cfg["hostname"] = os.path.basename(path)
    lx = cfg.setdefault("linux", {})
    lx["cgroupsPath"] = cgroup
    # umoci's default config as it is: pid, network (loopback only), ipc, uts
    # and mount namespaces, /proc, /dev, /sys, /sys/fs/cgroup mounted.
    for src, dst in binds:
        cfg["mounts"].append({"destination": dst, "type": "bind", "source": src,
                              "options": ["rbind", "rw"]})
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
