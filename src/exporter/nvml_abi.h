/* nvml_abi.h - the subset of the NVML C API the gpu collector loads with dlopen, declared
 * from NVIDIA's public NVML API reference (docs.nvidia.com/deploy/nvml-api); no NVIDIA
 * header is needed to build.  tests/fakenvml implements the same subset.
 *
 * Handles are opaque pointers as in the driver's nvml.h; struct layouts are those of the
 * API reference for the versioned symbols named in the function table below. */
#ifndef CFIT_NVML_ABI_H
#define CFIT_NVML_ABI_H

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_GPU_NOT_FOUND = 28,
    NVML_ERROR_UNKNOWN = 999
};

enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_MEMORY_ERROR_TYPE_CORRECTED = 0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };
enum { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 };
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };
/* Field ids (nvmlDeviceGetFieldValues), from the API reference's "Field Value Enums"; an id the
 * driver does not know comes back with its own nvmlReturn, so one old driver loses only that field. */
enum {
    NVML_FI_DEV_RETIRED_SBE = 29,                 /* pages retired for single-bit errors */
    NVML_FI_DEV_RETIRED_DBE = 30,                 /* pages retired for double-bit errors */
    NVML_FI_DEV_RETIRED_PENDING = 31,             /* 1: a page waits for retirement (next reset) */
    NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL = 38,
    NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL = 45,
    NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL = 52,
    NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL = 59,
    NVML_FI_DEV_MEMORY_TEMP = 82,                 /* HBM temperature, C */
    NVML_FI_DEV_PCIE_REPLAY_COUNTER = 94,
    NVML_FI_DEV_REMAPPED_COR = 142,               /* rows remapped for correctable errors */
    NVML_FI_DEV_REMAPPED_UNC = 143,               /* rows remapped for uncorrectable errors */
    NVML_FI_DEV_REMAPPED_PENDING = 144,           /* 1: a remap waits for the next reset */
    NVML_FI_DEV_REMAPPED_FAILURE = 145            /* 1: a remap failed */
};
enum {
    NVML_FI_DEV_NVLINK_LINK_COUNT = 91,
    NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138,   /* KiB, per link (scopeId) */
    NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139
};
#define NVML_EVENT_TYPE_XID_CRITICAL_ERROR 0x0000000000000008ULL
#define NVML_DEVICE_UUID_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80

typedef struct nvmlUtilization_st {
    unsigned int gpu;       /* % of the sample period with a kernel running */
    unsigned int memory;    /* % of the sample period with device memory read or written */
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
    unsigned long long total, free, used;   /* bytes */
} nvmlMemory_t;

/* nvmlDeviceGetMemoryInfo_v2: version is NVML_STRUCT_VERSION(Memory, 2) = sizeof | 2 << 24 */
typedef struct nvmlMemory_v2_st {
    unsigned int version;
    unsigned long long total, reserved, free, used;   /* bytes; used excludes reserved */
} nvmlMemory_v2_t;
#define NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
/* nvmlDeviceGetPciInfo_v3 */
typedef struct nvmlPciInfo_st {
    char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];   /* "00000000:0F:00.0" */
} nvmlPciInfo_t;

typedef struct nvmlEventData_st {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;           /* the XID number for XID events */
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

typedef enum nvmlValueType_enum {
    NVML_VALUE_TYPE_DOUBLE = 0,
    NVML_VALUE_TYPE_UNSIGNED_INT = 1,
    NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
    NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
    NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4
} nvmlValueType_t;

typedef union nvmlValue_st {
    double dVal;
    int siVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
    unsigned int fieldId;
    unsigned int scopeId;       /* the NVLink link for per-link fields */
    long long timestamp;
    long long latencyUsec;
    nvmlValueType_t valueType;
    nvmlReturn_t nvmlReturn;
    nvmlValue_t value;
} nvmlFieldValue_t;

typedef struct nvmlProcessInfo_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

#endif
